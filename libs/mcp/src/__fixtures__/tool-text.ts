/** The text of a tool result's first content block (the observation JSON). */
export function toolText(result: unknown): string {
  return (result as { content: Array<{ type: string; text: string }> }).content[0].text;
}
