// A held request to a model (issue 42): the `request` of an `llm.permit` stage read into
// the messages a reviewer approves sending — OpenAI's `messages` (string or parts content,
// tool calls, tool results) and Anthropic's `system` + `messages` (text, tool_use and
// tool_result blocks). What is not text is shown as JSON, so nothing is hidden.

export interface PromptMessage {
  role: string;
  /** The message's text; a non-text part as compact JSON. */
  text: string;
}

const str = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

function partText(p: unknown): string {
  if (typeof p === 'string') return p;
  if (p && typeof p === 'object') {
    const o = p as Record<string, unknown>;
    if (typeof o.text === 'string') return o.text;
    if (o.type === 'tool_result') return contentText(o.content);
    if (o.type === 'tool_use') return `calls ${str(o.name)} with ${JSON.stringify(o.input ?? {})}`;
  }
  return JSON.stringify(p);
}

function contentText(c: unknown): string {
  if (c === null || c === undefined) return '';
  if (Array.isArray(c)) return c.map(partText).join('\n');
  return partText(c);
}

/** The messages of a held request, in order; `null` when `request` is not a chat request. */
export function promptMessages(request: unknown): PromptMessage[] | null {
  if (!request || typeof request !== 'object') return null;
  const r = request as Record<string, unknown>;
  if (!Array.isArray(r.messages)) return null;
  const out: PromptMessage[] = [];
  if (r.system !== undefined) out.push({ role: 'system', text: contentText(r.system) });
  for (const m of r.messages) {
    const o = (m ?? {}) as Record<string, unknown>;
    let role = typeof o.role === 'string' ? o.role : '?';
    const blocks = Array.isArray(o.content) ? (o.content as Record<string, unknown>[]) : [];
    if (role === 'user' && blocks.length > 0 && blocks.every((b) => b?.type === 'tool_result')) role = 'tool';
    let text = contentText(o.content);
    if (Array.isArray(o.tool_calls)) {
      const calls = (o.tool_calls as Record<string, unknown>[]).map((t) => {
        const f = (t.function ?? {}) as Record<string, unknown>;
        return `calls ${str(f.name)} with ${str(f.arguments)}`;
      });
      text = [text, ...calls].filter(Boolean).join('\n');
    }
    out.push({ role, text });
  }
  return out;
}
