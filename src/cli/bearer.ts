/** `--bearer TOKEN`, else `$TASKRAIL_BEARER`; the library itself reads no environment. */
export function bearerFrom(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  if (flag !== undefined && flag !== '') return flag;
  const fromEnv = env['TASKRAIL_BEARER'];
  return fromEnv !== undefined && fromEnv !== '' ? fromEnv : undefined;
}
