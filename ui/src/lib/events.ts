// The live event stream: GET /api/v1/events as Server-Sent Events, read with
// fetch streaming (EventSource cannot send an Authorization header), reconnected
// with backoff. After every (re)connect listeners get a `connected` signal, so
// views refetch whatever they may have missed while offline.

import { apiBase, token } from './config';

export interface GatewayEvent {
  type: string;
  subject_kind: 'plan' | 'server' | 'standing';
  subject: string;
  title: string;
  risk: string;
  plan_hash?: string;
  observed_hash?: string;
  revision?: number;
  log_index?: number;
}

export type StreamState = 'idle' | 'connecting' | 'live' | 'offline' | 'unauthorized';

type Listener = (e: GatewayEvent | { type: 'connected' }) => void;

/** Splits an SSE byte stream into events; feed it text, get events back. */
export class SseParser {
  private buf = '';
  private event = '';
  private data: string[] = [];

  push(chunk: string): { event: string; data: string }[] {
    this.buf += chunk;
    const out: { event: string; data: string }[] = [];
    let nl: number;
    while ((nl = this.buf.search(/\r\n|\r|\n/)) >= 0) {
      const line = this.buf.slice(0, nl);
      const sep = this.buf[nl] === '\r' && this.buf[nl + 1] === '\n' ? 2 : 1;
      // A lone trailing \r may be the first half of \r\n: wait for more.
      if (this.buf[nl] === '\r' && nl + 1 === this.buf.length) break;
      this.buf = this.buf.slice(nl + sep);
      if (line === '') {
        if (this.data.length) out.push({ event: this.event || 'message', data: this.data.join('\n') });
        this.event = '';
        this.data = [];
      } else if (!line.startsWith(':')) {
        const i = line.indexOf(':');
        const field = i < 0 ? line : line.slice(0, i);
        let value = i < 0 ? '' : line.slice(i + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'event') this.event = value;
        else if (field === 'data') this.data.push(value);
      }
    }
    return out;
  }
}

export class EventStream {
  state: StreamState = 'idle';
  private listeners = new Set<Listener>();
  private stateListeners = new Set<(s: StreamState) => void>();
  private abort: AbortController | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private attempt = 0;

  subscribe(f: Listener): () => void {
    this.listeners.add(f);
    return () => this.listeners.delete(f);
  }

  onState(f: (s: StreamState) => void): () => void {
    this.stateListeners.add(f);
    return () => this.stateListeners.delete(f);
  }

  private setState(s: StreamState) {
    this.state = s;
    this.stateListeners.forEach((f) => f(s));
  }

  start() {
    this.stop();
    this.attempt = 0;
    void this.connect();
  }

  stop() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.abort?.abort();
    this.abort = null;
    this.setState('idle');
  }

  private retry() {
    const delay = Math.min(15_000, 500 * 2 ** this.attempt) * (0.75 + Math.random() * 0.5);
    this.attempt = Math.min(this.attempt + 1, 6);
    this.timer = setTimeout(() => void this.connect(), delay);
  }

  private async connect() {
    const t = token();
    if (!t) {
      this.setState('unauthorized');
      return;
    }
    const abort = new AbortController();
    this.abort = abort;
    this.setState('connecting');
    try {
      const r = await fetch(apiBase() + '/api/v1/events', {
        headers: { Authorization: `Bearer ${t}`, Accept: 'text/event-stream' },
        signal: abort.signal,
        cache: 'no-store',
      });
      if (r.status === 401) {
        this.setState('unauthorized');
        return;
      }
      if (!r.ok || !r.body) throw new Error(`HTTP ${r.status}`);
      this.attempt = 0;
      this.setState('live');
      this.emit({ type: 'connected' });
      const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
      const parser = new SseParser();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        for (const ev of parser.push(value)) {
          try {
            this.emit(JSON.parse(ev.data) as GatewayEvent);
          } catch {
            /* not JSON: ignore */
          }
        }
      }
      throw new Error('stream ended');
    } catch {
      if (abort.signal.aborted) return;
      this.setState('offline');
      this.retry();
    }
  }

  private emit(e: GatewayEvent | { type: 'connected' }) {
    this.listeners.forEach((f) => f(e));
  }
}

export const events = new EventStream();
