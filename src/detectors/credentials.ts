import { regexDetector, type Detector } from './detector.ts';
import { shannonEntropy } from './entropy.ts';
import { gitleaksSource } from './gitleaks.ts';

/*
 * Token formats with a fixed prefix. Each regex is gitleaks' pattern with its
 * boundaries made explicit: a token must be a whole run of its own alphabet
 * (`\b` where that alphabet is [A-Za-z0-9_], a lookaround on [\w-] where it
 * includes `-`), so a token-shaped slice of a longer identifier never matches.
 * The entropy minimums are gitleaks' own.
 */

const minEntropy = (bits: number) => (match: string) => shannonEntropy(match) >= bits;

const awsAccessKey = regexDetector({
  id: 'aws_access_key',
  summary: 'AWS access key id (AKIA…, ASIA… and the other IAM prefixes)',
  source: gitleaksSource('aws-access-token'),
  regex: /\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16}\b/g,
  keywords: ['A3T', 'AKIA', 'ASIA', 'ABIA', 'ACCA'],
  // gitleaks' allowlist: AWS documentation's placeholder keys all end in EXAMPLE.
  accept: (m) => !m.endsWith('EXAMPLE') && shannonEntropy(m) >= 3,
});

const gcpApiKey = regexDetector({
  id: 'gcp_api_key',
  summary: 'Google Cloud / Firebase API key (AIza…)',
  source: gitleaksSource('gcp-api-key'),
  regex: /(?<![\w-])AIza[\w-]{35}(?![\w-])/g,
  keywords: ['AIza'],
  accept: minEntropy(4),
});

const githubToken = regexDetector({
  id: 'github_token',
  summary:
    'GitHub token: classic personal, OAuth, user-to-server, server-to-server, refresh, and fine-grained personal',
  source: gitleaksSource(
    'github-pat',
    'github-oauth',
    'github-app-token',
    'github-refresh-token',
    'github-fine-grained-pat',
  ),
  regex: /\b(?:gh[pousr]_[0-9A-Za-z]{36}|github_pat_\w{82})\b/g,
  keywords: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_', 'github_pat_'],
  accept: minEntropy(3),
});

const gitlabToken = regexDetector({
  id: 'gitlab_token',
  summary: 'GitLab personal access token (glpat-…, legacy and routable)',
  source: gitleaksSource('gitlab-pat', 'gitlab-pat-routable'),
  regex: /(?<![\w-])glpat-(?:[\w-]{20}|[\w-]{27,300}\.[0-9a-z]{9})(?![\w-])/g,
  keywords: ['glpat-'],
  accept: minEntropy(3),
});

const slackToken = regexDetector({
  id: 'slack_token',
  summary: 'Slack token: bot, user, app-level, legacy, workspace and configuration tokens (xox…, xapp-…)',
  source: gitleaksSource(
    'slack-bot-token',
    'slack-user-token',
    'slack-app-token',
    'slack-legacy-token',
    'slack-legacy-bot-token',
    'slack-legacy-workspace-token',
    'slack-config-access-token',
    'slack-config-refresh-token',
  ),
  // gitleaks' rules joined, with its unbounded counts capped and its (?i) dropped: Slack issues the prefixes in lower case.
  // Only the bot token ends in an unbounded run, and every start is the start of a [\w-] run, so a failing candidate costs its run's length once.
  regex: new RegExp(
    [
      '(?<![\\w-])(?:',
      [
        'xoxb-[0-9]{10,13}-[0-9]{10,13}[a-zA-Z0-9-]*',
        'xox[pe](?:-[0-9]{10,13}){3}-[a-zA-Z0-9-]{28,34}',
        'xapp-\\d-[A-Za-z0-9]{1,64}-\\d{1,32}-[a-zA-Z0-9]{1,128}',
        'xox[os]-\\d{1,32}-\\d{1,32}-\\d{1,32}-[a-fA-F\\d]{1,128}',
        'xoxb-[0-9]{8,14}-[a-zA-Z0-9]{18,26}',
        'xox[ar]-(?:\\d-)?[0-9a-zA-Z]{8,48}',
        'xoxe\\.xox[bp]-\\d-[A-Za-z0-9]{163,166}',
        'xoxe-\\d-[A-Za-z0-9]{146}',
      ].join('|'),
      ')(?![\\w-])',
    ].join(''),
    'g',
  ),
  keywords: ['xox', 'xapp-'],
  accept: minEntropy(2),
});

const slackWebhook = regexDetector({
  id: 'slack_webhook',
  summary: 'Slack incoming-webhook, workflow or trigger URL',
  source: gitleaksSource('slack-webhook-url'),
  regex:
    /(?:https?:\/\/)?(?<![\w.-])hooks\.slack\.com\/(?:services|workflows|triggers)\/[A-Za-z0-9+/]{43,56}(?![A-Za-z0-9+/])/g,
  keywords: ['hooks.slack.com'],
});

const npmToken = regexDetector({
  id: 'npm_token',
  summary: 'npm access token (npm_…)',
  source: gitleaksSource('npm-access-token'),
  regex: /\bnpm_[A-Za-z0-9]{36}\b/g,
  keywords: ['npm_'],
  accept: minEntropy(2),
});

export const credentialDetectors: readonly Detector[] = [
  awsAccessKey,
  gcpApiKey,
  githubToken,
  gitlabToken,
  slackToken,
  slackWebhook,
  npmToken,
];
