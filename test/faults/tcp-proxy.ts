/**
 * A TCP proxy in front of PostgreSQL whose behaviour a test switches, to stage what an outage looks
 * like from the server: `forward` (the database is there), `refuse` (the port is closed: every open
 * connection is cut, new ones are refused, as when PostgreSQL is stopped) and `blackhole` (the
 * database stops answering: open connections freeze, new ones are accepted and never served, as in
 * a network partition).
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export type ProxyMode = 'forward' | 'refuse' | 'blackhole';

/** A running proxy. */
export interface TcpProxy {
  /** The port it listens on (the same across `refuse` and back). */
  readonly port: number;
  /** A connection string through the proxy, for `url` (a `postgres://` URL). */
  urlFor(url: string): string;
  /** Switches behaviour; resolves once the listener is closed or listening again. */
  setMode(mode: ProxyMode): Promise<void>;
  /** Connections accepted so far. */
  readonly accepted: () => number;
  close(): Promise<void>;
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : port);
    });
  });
}

/**
 * Starts a proxy to `upstream` (`host:port`, PostgreSQL by default) in `forward` mode.
 *
 * @param upstream - where to forward
 * @returns the proxy; close it after the test
 */
export async function startTcpProxy(upstream = { host: '127.0.0.1', port: 5432 }): Promise<TcpProxy> {
  let mode: ProxyMode = 'forward';
  let accepted = 0;
  const sockets = new Set<Socket>();
  const frozen = new Set<Socket>();

  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => {
      sockets.delete(socket);
      frozen.delete(socket);
    });
  };

  const onConnection = (client: Socket) => {
    accepted++;
    track(client);
    if (mode === 'blackhole') {
      // Accepted, never answered.
      client.pause();
      frozen.add(client);
      return;
    }
    const server = connect(upstream.port, upstream.host);
    track(server);
    client.pipe(server);
    server.pipe(client);
    client.on('close', () => server.destroy());
    server.on('close', () => client.destroy());
  };

  let listener = createServer(onConnection);
  const port = await listen(listener, 0);

  return {
    port,
    urlFor(url) {
      const parsed = new URL(url);
      parsed.hostname = '127.0.0.1';
      parsed.port = String(port);
      return parsed.href;
    },
    accepted: () => accepted,
    async setMode(next) {
      if (next === mode) return;
      const previous = mode;
      mode = next;
      if (next === 'refuse') {
        // Stop listening and cut every connection: what a stopped PostgreSQL looks like.
        await new Promise<void>((resolve) => {
          listener.close(() => resolve());
          for (const socket of sockets) socket.destroy();
        });
      } else if (next === 'blackhole') {
        // Open connections stop moving data in both directions.
        for (const socket of sockets) {
          socket.unpipe();
          socket.pause();
          frozen.add(socket);
        }
        if (previous === 'refuse') {
          listener = createServer(onConnection);
          await listen(listener, port);
        }
      } else {
        // Back to forwarding: frozen connections are dropped (the clients reconnect).
        for (const socket of frozen) socket.destroy();
        if (previous === 'refuse') {
          listener = createServer(onConnection);
          await listen(listener, port);
        }
      }
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      if (listener.listening) await new Promise<void>((resolve) => listener.close(() => resolve()));
    },
  };
}
