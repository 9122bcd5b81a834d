// The chat: useChat (AI SDK 7) with a transport whose prepareSendMessagesRequest runs ctxguard
// (src/context-guard.js) before each send; messages and checkpoint survive a reload.
import React, { useEffect, useMemo, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport } from 'ai';
import { ContextMeter } from './ContextMeter.jsx';
import { clearSaved, loadSaved, saveMessages, startGuard } from './context-guard.js';

function Chat({ guard }) {
  const [metrics, setMetrics] = useState(guard.initialMetrics);
  const [status, setStatus] = useState(guard.status);
  useEffect(() => {
    guard.listen({ onMetrics: setMetrics, onStatus: setStatus });
  }, [guard]);
  const transport = useMemo(
    () => new DefaultChatTransport({ api: '/api/chat', prepareSendMessagesRequest: guard.prepareSendMessagesRequest }),
    [guard],
  );
  const { messages, sendMessage, status: chatStatus, error } = useChat({
    id: 'example',
    messages: loadSaved().messages ?? [],
    transport,
    onFinish: ({ messages: all }) => saveMessages(all),
  });
  const [input, setInput] = useState('');
  const busy = chatStatus === 'submitted' || chatStatus === 'streaming';
  return (
    <main data-status={chatStatus} data-turns={messages.filter((m) => m.role === 'user').length}>
      <header>
        <h1>useChat + ctxguard</h1>
        <ContextMeter metrics={metrics} />
        <p className="status" data-testid="guard-status" data-restored={String(status.restored)} data-compactions={status.compactions}>
          {status.restored ? 'checkpoint restored · ' : ''}
          {status.sends} sends · {status.compactions} compactions
          {status.sent != null ? ` · last send carried ${status.sent} of ${messages.length} messages` : ''}
        </p>
        <button type="button" onClick={() => { clearSaved(); location.reload(); }}>New chat</button>
      </header>
      <ol className="messages">
        {messages.map((m) => (
          <li key={m.id} className={m.role} data-role={m.role}>
            {m.parts.map((p, i) => {
              if (p.type === 'text') return <p key={i}>{p.text}</p>;
              if (p.type.startsWith('tool-')) return <p key={i} className="tool">🔧 {p.type.slice(5)} ({p.state})</p>;
              return null;
            })}
          </li>
        ))}
      </ol>
      {error ? <p className="error" data-testid="error">{String(error.message ?? error)}</p> : null}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (!input.trim() || busy) return;
          sendMessage({ text: input });
          setInput('');
        }}
      >
        <input aria-label="Message" value={input} onChange={(e) => setInput(e.target.value)} placeholder="Ask something (say “search …” to run a tool)" />
        <button type="submit" disabled={busy}>Send</button>
      </form>
    </main>
  );
}

/** The guard's callbacks reach the mounted component once it listens. */
async function boot() {
  let listeners = null;
  let status = { restored: false, sends: 0, compactions: 0 };
  const g = await startGuard({
    onMetrics: (m) => listeners?.onMetrics(m),
    onStatus: (s) => {
      status = s;
      listeners?.onStatus(s);
    },
  });
  g.status = status;
  g.listen = (l) => {
    listeners = l;
    l.onStatus(status);
  };
  createRoot(document.getElementById('root')).render(<Chat guard={g} />);
}

boot();
