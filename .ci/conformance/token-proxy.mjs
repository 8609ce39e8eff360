// A loopback proxy that adds `Authorization: Bearer TOKEN` to every request and passes the rest
// on as it is: the conformance suite has no option for auth headers. Host and Origin headers
// naming the proxy's port are rewritten to the server's, so the server's own Host/Origin checks
// (DNS rebinding) still judge what the suite sends; a foreign Host or Origin is passed unchanged.
//
// node token-proxy.mjs TARGET_PORT TOKEN_FILE  ->  prints the port it listens on, one line.
import http from 'node:http';
import fs from 'node:fs';

const [targetPort, tokenFile] = process.argv.slice(2);
const token = fs.readFileSync(tokenFile, 'utf8').split('\n')[0].trim().split(/\s+/)[0];

const server = http.createServer((req, res) => {
  const own = `127.0.0.1:${server.address().port}`;
  const ownLocal = `localhost:${server.address().port}`;
  const headers = { ...req.headers, authorization: `Bearer ${token}` };
  for (const name of ['host', 'origin']) {
    const value = headers[name];
    if (typeof value !== 'string') continue;
    headers[name] = value.replace(own, `127.0.0.1:${targetPort}`).replace(ownLocal, `localhost:${targetPort}`);
  }
  const upstream = http.request(
    { host: '127.0.0.1', port: Number(targetPort), method: req.method, path: req.url, headers },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  upstream.on('error', (error) => {
    res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(`token proxy: ${error.message}\n`);
  });
  req.pipe(upstream);
  res.on('close', () => upstream.destroy());
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
