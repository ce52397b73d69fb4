// Serves an in-memory PGlite (WASM PostgreSQL) with the pgvector extension over
// the PostgreSQL wire protocol on 127.0.0.1:<port>, for the pgvector index tests.
// Usage: node .ci/pglite/server.cjs <port> [modules-dir]
// modules-dir is where .ci/pglite.sh installed the packages (default .tools/pglite).
'use strict'
const path = require('node:path')
const { createRequire } = require('node:module')

const port = Number(process.argv[2])
if (!Number.isInteger(port) || port <= 0 || port > 65535) {
  console.error('usage: node server.cjs <port> [modules-dir]')
  process.exit(2)
}
const dir = path.resolve(process.argv[3] || path.join(__dirname, '..', '..', '.tools', 'pglite'))
const req = createRequire(path.join(dir, 'package.json'))

async function main() {
  const { PGlite } = req('@electric-sql/pglite')
  const { vector } = req('@electric-sql/pglite-pgvector')
  const { PGLiteSocketServer } = req('@electric-sql/pglite-socket')
  const db = await PGlite.create({ extensions: { vector } })
  const server = new PGLiteSocketServer({ db, port, host: '127.0.0.1' })
  await server.start()
  console.log(`pglite listening on 127.0.0.1:${port}`)
  const stop = async () => {
    await server.stop()
    await db.close()
    process.exit(0)
  }
  process.on('SIGTERM', stop)
  process.on('SIGINT', stop)
}

main().catch((err) => {
  console.error('pglite server:', err)
  process.exit(1)
})
