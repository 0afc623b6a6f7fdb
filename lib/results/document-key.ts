/** S3 object key of one encrypted part of a result version (kept apart from the S3 client code). */
export function documentKey(resultId: string, versionId: string, part: string): string {
  return `lab-results/${resultId}/${versionId}/${part}`;
}
