import type { APIGatewayProxyEvent } from 'aws-lambda';

/** Every value of a header, case-insensitively, from both the single and multi-value maps. */
export function headerValues(event: Pick<APIGatewayProxyEvent, 'headers' | 'multiValueHeaders'>, name: string): string[] {
  const wanted = name.toLowerCase();
  const values: string[] = [];
  for (const [key, list] of Object.entries(event.multiValueHeaders ?? {})) {
    if (key.toLowerCase() === wanted && list) values.push(...list);
  }
  if (values.length === 0) {
    for (const [key, value] of Object.entries(event.headers ?? {})) {
      if (key.toLowerCase() === wanted && value !== undefined) values.push(value);
    }
  }
  return values;
}

export function headerValue(event: Pick<APIGatewayProxyEvent, 'headers' | 'multiValueHeaders'>, name: string): string | undefined {
  return headerValues(event, name)[0];
}
