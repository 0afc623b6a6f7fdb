/**
 * Does an Accept header admit this media type? Honours wildcards (`*\/*`, `type/*`) and q=0
 * exclusions; a missing or empty header accepts anything (RFC 9110 12.5.1).
 */
export function acceptsMediaType(accept: string | undefined, mediaType: string): boolean {
  if (accept === undefined || accept.trim() === '') return true;
  const [type, subtype] = mediaType.toLowerCase().split('/');
  let best = -1;
  let bestQ = 0;
  for (const range of accept.split(',')) {
    const [rawRange, ...params] = range.split(';').map((p) => p.trim().toLowerCase());
    if (!rawRange) continue;
    const [rType, rSub] = rawRange.split('/');
    let q = 1;
    for (const param of params) {
      const [k, v] = param.split('=').map((x) => x.trim());
      if (k === 'q') q = Number.isFinite(Number(v)) ? Number(v) : 0;
    }
    let specificity = -1;
    if (rType === type && rSub === subtype) specificity = 2;
    else if (rType === type && rSub === '*') specificity = 1;
    else if (rType === '*' && rSub === '*') specificity = 0;
    if (specificity > best) {
      best = specificity;
      bestQ = q;
    }
  }
  return best >= 0 && bestQ > 0;
}
