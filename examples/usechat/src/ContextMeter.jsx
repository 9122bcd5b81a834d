// A context meter fed by ctxguard's `metrics` — the numbers AI Elements' <Context> takes
// (usedTokens, maxTokens) plus what only the guard knows: the usable limit after the reserve,
// the trigger where compaction starts, and the state.
import React from 'react';

const fmt = new Intl.NumberFormat('en', { notation: 'compact', maximumFractionDigits: 1 });

export function ContextMeter({ metrics }) {
  if (!metrics) return <div className="meter" data-testid="meter" data-used="0">context: —</div>;
  const { usedTokens, usableLimit, triggerLimit, contextWindow, state } = metrics;
  const pct = Math.min(100, (usedTokens / contextWindow) * 100);
  return (
    <div
      className={`meter meter-${state}`}
      data-testid="meter"
      data-used={usedTokens}
      data-limit={usableLimit}
      data-state={state}
      title={`${usedTokens} of ${contextWindow} tokens (usable ${usableLimit}, compaction at ${triggerLimit})`}
    >
      <div className="bar">
        <div className="fill" style={{ width: `${pct}%` }} />
        <div className="mark" style={{ left: `${(triggerLimit / contextWindow) * 100}%` }} />
      </div>
      <span>
        {fmt.format(usedTokens)} / {fmt.format(contextWindow)} tokens · {state.replace('_', ' ')}
      </span>
    </div>
  );
}
