import { CredentialScan } from '../../dist/coordinator/credentialScan.js';
const t = Date.now();
const r = new CredentialScan('/').find();
console.log(Date.now() - t, 'ms', r.complete, r.paths.length, r.paths.filter(p => p.startsWith('/work')).slice(0, 20), r.paths.slice(0, 10));
