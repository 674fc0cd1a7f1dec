/**
 * The gitleaks release the credential patterns were taken from
 * (config/gitleaks.toml at b58d3f1, 27 commits after v8.30.0; MIT, see NOTICE.md).
 */
const GITLEAKS = 'gitleaks v8.30.0+27 (b58d3f1)';

export function gitleaksSource(...rules: string[]): string {
  return `${GITLEAKS} ${rules.length === 1 ? 'rule' : 'rules'} ${rules.join(', ')} (MIT)`;
}
