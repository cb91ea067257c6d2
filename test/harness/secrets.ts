/** Patterns of secret material that must never appear in workflow history, logs or snapshots. */
export const SECRET_PATTERNS: { name: string; re: RegExp }[] = [
  { name: 'PEM private key', re: /-----BEGIN [A-Z ]*PRIVATE KEY-----/ },
  { name: 'OpenSSH private key body', re: /b3BlbnNzaC1rZXktdjE/ }, // base64 of "openssh-key-v1"
  { name: 'AWS access key id', re: /\b(AKIA|ASIA)[0-9A-Z]{16}\b/ },
  { name: 'AWS secret key field', re: /aws_secret_access_key|secretAccessKey/i },
  { name: 'kubeconfig client key', re: /client-key-data/ },
  { name: 'bearer token', re: /Bearer\s+[A-Za-z0-9._~+/-]{16,}/ },
  { name: 'api key field with a value', re: /"(api[_-]?key|apiKey|token|client_secret|password)"\s*:\s*"[^"]{8,}"/i },
];

/** Names of the secret patterns found in `text`, plus any of the exact `known` secrets it contains. */
export function findSecrets(text: string, known: string[] = []): string[] {
  const hits = SECRET_PATTERNS.filter((p) => p.re.test(text)).map((p) => p.name);
  for (const k of known) if (k.length >= 8 && text.includes(k)) hits.push(`known secret ${k.slice(0, 4)}…`);
  return hits;
}

/** Payloads in a history JSON are base64; decode every `data` field so patterns see the content. */
export function decodedHistoryText(historyJson: string): string {
  const parts = [historyJson];
  for (const m of historyJson.matchAll(/"data"\s*:\s*"([A-Za-z0-9+/=]+)"/g)) parts.push(Buffer.from(m[1]!, 'base64').toString('utf8'));
  return parts.join('\n');
}
