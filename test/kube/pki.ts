/**
 * The certificates a test control plane needs, made with the openssl CLI in
 * its own folder: one CA, the API server's serving certificate for loopback,
 * client certificates for the admin (group system:masters) and the
 * controller manager, and the service-account signing key pair.
 */
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Pair {
  readonly cert: string;
  readonly key: string;
}

export interface Pki {
  readonly ca: Pair;
  readonly serving: Pair;
  readonly admin: Pair;
  readonly controllerManager: Pair;
  /** Service-account token keys: the private key signs, the public key verifies. */
  readonly serviceAccount: { readonly privateKey: string; readonly publicKey: string };
}

const EC = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
const openssl = (args: readonly string[]): void => {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
};

function leaf(dir: string, name: string, ca: Pair, subject: string, extensions: readonly string[]): Pair {
  const pair = { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
  const csr = join(dir, `${name}.csr`);
  openssl([
    'req',
    '-new',
    ...EC,
    '-subj',
    subject,
    ...extensions.flatMap((e) => ['-addext', e]),
    '-keyout',
    pair.key,
    '-out',
    csr,
  ]);
  openssl([
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    ca.cert,
    '-CAkey',
    ca.key,
    '-CAcreateserial',
    '-days',
    '2',
    '-copy_extensions',
    'copy',
    '-out',
    pair.cert,
  ]);
  return pair;
}

export function makePki(dir: string): Pki {
  const ca = { cert: join(dir, 'ca.crt'), key: join(dir, 'ca.key') };
  openssl([
    'req',
    '-x509',
    ...EC,
    '-days',
    '2',
    '-subj',
    '/CN=toolgate-test-ca',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
    '-keyout',
    ca.key,
    '-out',
    ca.cert,
  ]);
  const client = ['extendedKeyUsage=clientAuth', 'keyUsage=critical,digitalSignature'];
  const serving = leaf(dir, 'apiserver', ca, '/CN=kube-apiserver', [
    'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc',
    'extendedKeyUsage=serverAuth',
    'keyUsage=critical,digitalSignature',
  ]);
  const admin = leaf(dir, 'admin', ca, '/O=system:masters/CN=toolgate-test-admin', client);
  const controllerManager = leaf(dir, 'controller-manager', ca, '/CN=system:kube-controller-manager', client);
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const serviceAccount = { privateKey: join(dir, 'sa.key'), publicKey: join(dir, 'sa.pub') };
  writeFileSync(serviceAccount.privateKey, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  writeFileSync(serviceAccount.publicKey, publicKey.export({ type: 'spki', format: 'pem' }));
  return { ca, serving, admin, controllerManager, serviceAccount };
}

/** A kubeconfig for one client certificate; it names the certificate files, which live as long as the control plane. */
export function writeKubeconfig(path: string, server: string, ca: string, user: Pair): void {
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    'current-context': 'toolgate-test',
    clusters: [{ name: 'toolgate-test', cluster: { server, 'certificate-authority': ca } }],
    users: [{ name: 'user', user: { 'client-certificate': user.cert, 'client-key': user.key } }],
    contexts: [{ name: 'toolgate-test', context: { cluster: 'toolgate-test', user: 'user' } }],
  };
  writeFileSync(path, JSON.stringify(config, null, 2), { mode: 0o600 });
}
