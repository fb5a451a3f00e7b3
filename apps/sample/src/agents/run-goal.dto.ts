import { IsNotEmpty, IsString, MaxLength } from 'class-validator';

export class RunGoalDto {
  @IsString()
  @IsNotEmpty()
  @MaxLength(4000)
  goal: string;
}
