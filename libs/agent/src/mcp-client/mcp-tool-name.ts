/**
 * The skill-name segment of an MCP tool name: camelCase words split with '_', lower-cased, every character
 * outside [a-z0-9_] replaced with '_', and 't_' put in front when the result does not start with a letter.
 * 'get-weather' -> 'get_weather', 'getWeather' -> 'get_weather', 'HTTPStatus' -> 'http_status',
 * 'files/read' -> 'files_read', '2fa' -> 't_2fa'. A name already valid ('get_weather') is kept.
 * Several tool names can map to one segment: the caller refuses them all (no silent collision).
 */
export function mcpToolSegment(tool: string): string {
  const words = tool.replace(/([a-z0-9])([A-Z])/g, '$1_$2').replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2');
  const segment = words.toLowerCase().replace(/[^a-z0-9_]/g, '_');
  return /^[a-z]/.test(segment) ? segment : `t_${segment}`;
}
