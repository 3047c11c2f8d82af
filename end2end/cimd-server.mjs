// Serves Client ID Metadata Documents over https on loopback for the OAuth
// suite: GET /clients/NAME.json answers DIR/NAME.json as application/json.
//
//   node cimd-server.mjs DIR CERT.pem KEY.pem   # prints the port, then serves
//
// The certificate is self-signed for localhost; run.sh hands it to the server
// through a test-only setting so the fetch is a real TLS fetch.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { basename, join } from 'node:path';

const [dir, cert, key] = process.argv.slice(2);
if (!dir || !cert || !key) {
  console.error('usage: node cimd-server.mjs DIR CERT.pem KEY.pem');
  process.exit(2);
}
const server = createServer({ cert: readFileSync(cert), key: readFileSync(key) }, (req, res) => {
  const url = new URL(req.url, 'https://localhost');
  const match = /^\/clients\/([A-Za-z0-9_-]+\.json)$/.exec(url.pathname);
  if (req.method !== 'GET' || !match) {
    res.writeHead(404).end();
    return;
  }
  let body;
  try {
    body = readFileSync(join(dir, basename(match[1])));
  } catch {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60' }).end(body);
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
