import { IsString, MaxLength, registerDecorator, ValidationArguments } from 'class-validator';
import { textProblem } from '../edge/text-rules';

/** Free text: not blank, no NUL or other control characters (tab and newlines allowed), no lone surrogates. */
export function IsSafeText(): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isSafeText',
      target: target.constructor,
      propertyName: String(propertyName),
      validator: {
        validate: (value: unknown) => typeof value === 'string' && textProblem(value) === undefined,
        defaultMessage: (args?: ValidationArguments) =>
          `${args?.property} ${typeof args?.value === 'string' ? (textProblem(args.value) ?? 'is invalid') : 'must be a string'}`,
      },
    });
}

export class RunGoalDto {
  @IsString()
  @MaxLength(4000)
  @IsSafeText()
  goal: string;
}
