// A held request to a model (issue 42): the `request` of an `llm.permit` stage read into
// the messages a reviewer approves sending — OpenAI's `messages` (string or parts content,
// tool calls, tool results), Anthropic's `system` + `messages` (text, tool_use and
// tool_result blocks) and Gemini's `systemInstruction` + `contents` (text, functionCall and
// functionResponse parts). What is not text is shown as JSON, so nothing is hidden.

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

/** A Gemini part as text: its text, a function's call or its response. */
function geminiPart(p: unknown): { text: string; tool: boolean } {
  const o = (p ?? {}) as Record<string, unknown>;
  if (typeof o.text === 'string') return { text: o.text, tool: false };
  const call = (o.functionCall ?? o.function_call) as Record<string, unknown> | undefined;
  if (call) return { text: `calls ${str(call.name)} with ${JSON.stringify(call.args ?? {})}`, tool: false };
  const response = (o.functionResponse ?? o.function_response) as Record<string, unknown> | undefined;
  if (response) return { text: JSON.stringify(response.response ?? {}), tool: true };
  return { text: JSON.stringify(p), tool: false };
}

function geminiMessages(r: Record<string, unknown>): PromptMessage[] {
  const out: PromptMessage[] = [];
  const system = (r.systemInstruction ?? r.system_instruction) as Record<string, unknown> | undefined;
  if (system && Array.isArray(system.parts)) {
    out.push({ role: 'system', text: system.parts.map((p) => geminiPart(p).text).join('\n') });
  }
  for (const c of r.contents as unknown[]) {
    const o = (c ?? {}) as Record<string, unknown>;
    const parts = (Array.isArray(o.parts) ? o.parts : []).map(geminiPart);
    const role = parts.length > 0 && parts.every((p) => p.tool) ? 'tool' : o.role === 'model' ? 'assistant' : 'user';
    out.push({ role, text: parts.map((p) => p.text).join('\n') });
  }
  return out;
}

/** The messages of a held request, in order; `null` when `request` is not a chat request. */
export function promptMessages(request: unknown): PromptMessage[] | null {
  if (!request || typeof request !== 'object') return null;
  const r = request as Record<string, unknown>;
  if (Array.isArray(r.contents)) return geminiMessages(r);
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
