// The july playground: a page over july serve's HTTP API. Everything the
// model, a tool or the tree gives is untrusted: this file builds DOM
// nodes and sets textContent, never innerHTML.

const TOKEN_KEY = 'july.playground.token';
const RESULT_FOLD = 2000; // characters of a tool result shown before "Show all"
const FILE_FOLD = 200000; // characters of a file shown before "Show all"

// ---- DOM helpers -------------------------------------------------------

// h builds an element: h('p', {class: 'x', onclick: f}, 'text', child…).
function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const kid of kids.flat()) {
    if (kid === undefined || kid === null || kid === false) continue;
    el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
  }
  return el;
}

const $ = (sel) => document.querySelector(sel);

function setStatus(text) { $('#status').textContent = text || ''; }

function fmtInt(n) { return (n || 0).toLocaleString('en-US'); }

function fmtBytes(n) {
  if (n < 1024) return n + ' B';
  if (n < 1 << 20) return (n / 1024).toFixed(1) + ' KiB';
  return (n / (1 << 20)).toFixed(1) + ' MiB';
}

function fmtTime(s) {
  if (!s) return '';
  const d = new Date(s);
  if (isNaN(d)) return s;
  return d.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

function tokens(u) {
  if (!u) return 0;
  return (u.inputTokens || 0) + (u.outputTokens || 0);
}

function usageText(u) {
  if (!u) return '';
  let s = `${fmtInt(u.inputTokens)} in · ${fmtInt(u.outputTokens)} out`;
  if (u.cacheReadTokens) s += ` · ${fmtInt(u.cacheReadTokens)} cache read`;
  if (u.cacheWriteTokens) s += ` · ${fmtInt(u.cacheWriteTokens)} cache write`;
  if (u.reasoningTokens) s += ` · ${fmtInt(u.reasoningTokens)} reasoning`;
  return s + ' tokens';
}

// ---- API ----------------------------------------------------------------

class APIError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

let tokenPrompt = null;

// askToken shows the token dialog once (concurrent callers share it).
function askToken() {
  if (!tokenPrompt) {
    tokenPrompt = new Promise((resolve) => {
      const dlg = $('#token-dialog');
      const form = $('#token-form');
      const input = $('#token-input');
      input.value = '';
      const done = (ev) => {
        ev.preventDefault();
        const tok = input.value.trim();
        if (!tok) return;
        sessionStorage.setItem(TOKEN_KEY, tok);
        form.removeEventListener('submit', done);
        dlg.close();
        tokenPrompt = null;
        resolve();
      };
      form.addEventListener('submit', done);
      dlg.showModal();
      input.focus();
    });
  }
  return tokenPrompt;
}

function authHeaders(extra) {
  const headers = Object.assign({}, extra);
  const tok = sessionStorage.getItem(TOKEN_KEY);
  if (tok) headers.Authorization = 'Bearer ' + tok;
  return headers;
}

// request calls the API and returns the Response, asking for the token on
// a 401; a JSON error answer becomes an APIError.
async function request(method, path, body) {
  for (;;) {
    const headers = authHeaders(body === undefined ? {} : { 'Content-Type': 'application/json' });
    const resp = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store', credentials: 'omit' });
    if (resp.status === 401) {
      sessionStorage.removeItem(TOKEN_KEY);
      await askToken();
      continue;
    }
    if (!resp.ok) {
      let code = 'http_' + resp.status, msg = resp.statusText;
      try {
        const j = await resp.json();
        if (j && j.error) { code = j.error.code; msg = j.error.message; }
      } catch (_) { /* not JSON */ }
      throw new APIError(resp.status, code, msg);
    }
    return resp;
  }
}

async function api(method, path, body) {
  const resp = await request(method, path, body);
  return resp.json();
}

// optional calls a route that a server may lack: null on a 404.
async function optional(path) {
  try {
    return await api('GET', path);
  } catch (e) {
    if (e instanceof APIError && e.status === 404) return null;
    throw e;
  }
}

function errorBox(e) {
  const msg = e instanceof APIError ? `${e.message} (${e.code})` : String(e && e.message || e);
  return h('p', { class: 'error', role: 'alert' }, msg);
}

// follow reads session events over SSE (fetch, so the token can be sent),
// from index after+1, calling onBatch with each chunk's events. On a
// dropped connection it resumes with ?after= the last index seen. It ends
// when signal aborts.
async function follow(base, after, onBatch, signal) {
  let last = after;
  let delay = 500;
  while (!signal.aborted) {
    try {
      const resp = await fetch(`${base}/events?after=${last}`, { headers: authHeaders({ Accept: 'text/event-stream' }), signal, cache: 'no-store', credentials: 'omit' });
      if (resp.status === 401) { sessionStorage.removeItem(TOKEN_KEY); await askToken(); continue; }
      if (!resp.ok) throw new APIError(resp.status, 'http_' + resp.status, `the event stream answered ${resp.status}`);
      delay = 500;
      // Marks for measuring (docs/perf.md): the first stream and batch.
      if (!performance.getEntriesByName('july:events-open').length) performance.mark('july:events-open');
      const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
      let buf = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += value;
        const batch = [];
        let cut;
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const frame = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          let data = '';
          for (const line of frame.split('\n')) {
            if (line.startsWith('data: ')) data += line.slice(6);
            else if (line.startsWith('data:')) data += line.slice(5);
          }
          if (!data) continue;
          try {
            const ev = JSON.parse(data);
            if (typeof ev.index === 'number' && ev.index > last) { last = ev.index; batch.push(ev); }
          } catch (_) { /* a frame that is not JSON is skipped */ }
        }
        if (batch.length) {
          if (!performance.getEntriesByName('july:events-first').length) performance.mark('july:events-first');
          onBatch(batch);
        }
      }
    } catch (e) {
      if (signal.aborted) return;
      setStatus('event stream dropped; reconnecting…');
    }
    if (signal.aborted) return;
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 10000);
  }
}

// ---- Markdown (safe: DOM nodes and text only) ---------------------------

const SAFE_URL = /^(https?:|mailto:|\/|#|\.\/|\.\.\/)/i;

// inline renders code spans, links, bold and italics of one line into el.
function inline(el, text) {
  const re = /(`+)([\s\S]*?)\1|\[([^\]\n]+)\]\(([^)\s]+)\)|\*\*([^*\n]+)\*\*|__([^_\n]+)__|\*([^*\n]+)\*|_([^_\n]+)_/g;
  let at = 0, m;
  while ((m = re.exec(text))) {
    if (m.index > at) el.append(text.slice(at, m.index));
    if (m[1]) el.append(h('code', {}, m[2]));
    else if (m[3] !== undefined) {
      const url = m[4];
      if (SAFE_URL.test(url)) el.append(h('a', { href: url, rel: 'noopener noreferrer nofollow', target: '_blank' }, m[3]));
      else el.append(m[0]);
    } else if (m[5] !== undefined || m[6] !== undefined) inline(el.appendChild(h('strong')), m[5] ?? m[6]);
    else inline(el.appendChild(h('em')), m[7] ?? m[8]);
    at = re.lastIndex;
  }
  if (at < text.length) el.append(text.slice(at));
  return el;
}

// markdown renders text as a fragment: headings, paragraphs, fenced code
// (highlighted), lists, quotes, rules. Raw HTML is text.
function markdown(text) {
  const out = h('div', { class: 'md' });
  const lines = String(text).replace(/\r\n?/g, '\n').split('\n');
  let i = 0;
  let para = [];
  const flush = () => {
    if (para.length) { inline(out.appendChild(h('p')), para.join('\n')); para = []; }
  };
  while (i < lines.length) {
    const line = lines[i];
    let m;
    if ((m = /^\s*(```+|~~~+)\s*([\w+.-]*)/.exec(line))) {
      flush();
      const fence = m[1], lang = m[2];
      const body = [];
      i++;
      while (i < lines.length && !lines[i].trimStart().startsWith(fence)) body.push(lines[i++]);
      i++;
      out.append(codeBlock(body.join('\n'), lang));
      continue;
    }
    if ((m = /^(#{1,6})\s+(.*)$/.exec(line))) {
      flush();
      inline(out.appendChild(h('h' + Math.min(6, m[1].length + 2))), m[2]);
      i++;
      continue;
    }
    if (/^\s*([-*_])(\s*\1){2,}\s*$/.test(line)) { flush(); out.append(h('hr')); i++; continue; }
    if (/^\s*>/.test(line)) {
      flush();
      const body = [];
      while (i < lines.length && /^\s*>/.test(lines[i])) body.push(lines[i++].replace(/^\s*>\s?/, ''));
      out.append(h('blockquote', {}, markdown(body.join('\n'))));
      continue;
    }
    if ((m = /^\s*([-*+]|\d+[.)])\s+/.exec(line))) {
      flush();
      const ordered = /\d/.test(m[1]);
      const list = h(ordered ? 'ol' : 'ul');
      while (i < lines.length && (m = /^\s*([-*+]|\d+[.)])\s+(.*)$/.exec(lines[i])) && /\d/.test(m[1]) === ordered) {
        let item = m[2];
        i++;
        while (i < lines.length && /^\s{2,}\S/.test(lines[i]) && !/^\s*([-*+]|\d+[.)])\s+/.test(lines[i])) item += '\n' + lines[i++].trim();
        inline(list.appendChild(h('li')), item);
      }
      out.append(list);
      continue;
    }
    if (!line.trim()) { flush(); i++; continue; }
    para.push(line);
    i++;
  }
  flush();
  return out;
}

// ---- Syntax highlighting (a small tokenizer; spans with text) ----------

const KEYWORDS = new Set(('break case catch class const continue def default defer delete do elif else enum export extends false ' +
  'finally fn for func function go if impl import in interface let loop match mod new nil none null package pub ' +
  'return select self static struct super switch this throw true try type typeof use var void while with yield async await from as')
  .split(' '));
const LANGS = { go: 1, js: 1, mjs: 1, ts: 1, tsx: 1, jsx: 1, py: 1, rs: 1, c: 1, h: 1, cc: 1, cpp: 1, java: 1, rb: 1, sh: 1, bash: 1, json: 1, yaml: 1, yml: 1, toml: 1, css: 1, sql: 1, swift: 1, kt: 1, javascript: 1, python: 1, rust: 1, typescript: 1, shell: 1 };

function highlight(code, lang) {
  const frag = document.createDocumentFragment();
  const hash = /^(py|python|sh|bash|shell|rb|yaml|yml|toml)$/.test(lang);
  const re = hash
    ? /(#[^\n]*)|("(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')|(\b\d[\w.]*\b)|([A-Za-z_]\w*)/g
    : /(\/\/[^\n]*|\/\*[\s\S]*?\*\/)|("(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`[^`]*`)|(\b\d[\w.]*\b)|([A-Za-z_$][\w$]*)/g;
  let at = 0, m;
  while ((m = re.exec(code))) {
    if (m[4] !== undefined && !KEYWORDS.has(m[4])) continue;
    if (m.index > at) frag.append(code.slice(at, m.index));
    const cls = m[1] !== undefined ? 'tok-com' : m[2] !== undefined ? 'tok-str' : m[3] !== undefined ? 'tok-num' : 'tok-kw';
    frag.append(h('span', { class: cls }, m[0]));
    at = re.lastIndex;
  }
  if (at < code.length) frag.append(code.slice(at));
  return frag;
}

function codeBlock(code, lang) {
  const c = h('code');
  lang = (lang || '').toLowerCase();
  if (LANGS[lang] && code.length < 500000) c.append(highlight(code, lang));
  else c.textContent = code;
  return h('pre', { class: 'code' }, c);
}

// folded shows text in a pre, cut at limit with a "Show all" button.
function folded(text, limit, cls) {
  const pre = h('pre', { class: cls || '' });
  if (text.length <= limit) { pre.textContent = text; return pre; }
  pre.textContent = text.slice(0, limit);
  const more = h('button', { type: 'button', class: 'link show-all', onclick: () => { pre.textContent = text; more.remove(); } },
    `Show all (${fmtInt(text.length)} characters)`);
  return h('div', {}, pre, more);
}

// ---- Routing ------------------------------------------------------------

function route() {
  const parts = location.pathname.split('/').filter(Boolean).map(decodeURIComponent);
  if (parts.length === 0) return { view: 'home' };
  if (parts.length === 1) return { view: 'agent', slug: parts[0] };
  if (parts.length === 3 && parts[1] === 'sessions') return { view: 'session', slug: parts[0], id: parts[2] };
  return { view: 'missing' };
}

function crumbs(...items) {
  const nav = $('#crumbs');
  nav.replaceChildren();
  for (const it of items) {
    nav.append(h('span', { class: 'sep', 'aria-hidden': 'true' }, '/'));
    nav.append(it.href ? h('a', { href: it.href }, it.text) : h('span', { 'aria-current': 'page' }, it.text));
  }
}

function agentPath(slug) { return '/' + encodeURIComponent(slug); }

// keynav moves focus among the [data-nav] items of box with the arrow
// keys (and j/k), Home and End.
function keynav(box) {
  box.addEventListener('keydown', (ev) => {
    if (ev.target.closest('textarea, input')) return;
    const items = [...box.querySelectorAll('[data-nav]')];
    if (!items.length) return;
    const at = items.indexOf(ev.target.closest('[data-nav]'));
    let to = -1;
    if (ev.key === 'ArrowDown' || ev.key === 'j') to = Math.min(items.length - 1, at + 1);
    else if (ev.key === 'ArrowUp' || ev.key === 'k') to = Math.max(0, at - 1);
    else if (ev.key === 'Home') to = 0;
    else if (ev.key === 'End') to = items.length - 1;
    else return;
    ev.preventDefault();
    items[to].focus();
  });
}

// ---- Home: the agents ---------------------------------------------------

async function home(main) {
  crumbs();
  document.title = 'july playground';
  const { agents, dev } = await api('GET', '/v1/agents');
  const list = h('ul', { class: 'cards' });
  for (const a of agents) {
    const li = h('li', { class: 'card' }, h('h2', {}, h('a', { href: agentPath(a.name) + '/' }, a.name)), h('p', { class: 'muted' }, 'model ', h('code', {}, a.model)));
    list.append(li);
    optional(`${agentPath(a.name)}/v1/sessions`).then((r) => {
      if (!r) return;
      const n = r.sessions.length;
      const running = r.sessions.filter((s) => s.state === 'running').length;
      li.append(h('p', {}, `${n} session${n === 1 ? '' : 's'}` + (running ? `, ${running} running` : '')));
    }).catch(() => {});
  }
  main.replaceChildren(h('h1', {}, 'Agents'), dev ? h('p', { class: 'badge' }, 'dev mode: schedules and reminders fire only by hand') : '', list);
}

// ---- Agent: sessions, new session, schedules, reminders ------------------

function sessionRow(slug, s) {
  const link = h('a', { href: `${agentPath(slug)}/sessions/${encodeURIComponent(s.id)}`, 'data-nav': true }, s.id);
  return h('tr', {},
    h('td', {}, link, s.lastMessage ? h('div', { class: 'muted clip' }, s.lastMessage) : ''),
    h('td', {}, h('span', { class: 'state state-' + s.state }, s.state), s.queued ? ` (+${s.queued} queued)` : ''),
    h('td', { class: 'num' }, fmtInt(s.turns)),
    h('td', { class: 'num', title: usageText(s.usage) }, fmtInt(tokens(s.usage))),
    h('td', {}, h('time', { datetime: s.updated }, fmtTime(s.updated))));
}

function composer(label, onSend) {
  const ta = h('textarea', { id: 'message', name: 'message', rows: 3, required: true, placeholder: 'Message the agent (Ctrl+Enter sends)' });
  const send = h('button', { type: 'submit', id: 'send' }, 'Send');
  const form = h('form', { class: 'composer', onsubmit: async (ev) => {
    ev.preventDefault();
    const text = ta.value;
    if (!text.trim()) return;
    send.disabled = true;
    try {
      await onSend(text);
      ta.value = '';
    } catch (e) {
      form.append(errorBox(e));
    } finally {
      send.disabled = false;
    }
  } }, h('label', { for: 'message', class: 'sr-only' }, label), ta, h('div', { class: 'row' }, send));
  ta.addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter' && (ev.ctrlKey || ev.metaKey)) { ev.preventDefault(); form.requestSubmit(); }
  });
  return form;
}

async function agent(main, slug) {
  const base = agentPath(slug) + '/v1';
  crumbs({ text: slug });
  document.title = `${slug} · july playground`;
  const [info, list, meta] = await Promise.all([api('GET', base + '/info'), api('GET', base + '/sessions'), optional('/v1/agents')]);
  const dev = !!(meta && meta.dev);
  const sessions = list.sessions.slice().sort((a, b) => (b.created || '').localeCompare(a.created || '') || b.id.localeCompare(a.id));
  const tbody = h('tbody', {}, sessions.map((s) => sessionRow(slug, s)));
  const table = h('table', { class: 'sessions' },
    h('caption', { class: 'sr-only' }, 'Sessions, newest first'),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Session'), h('th', { scope: 'col' }, 'State'), h('th', { scope: 'col', class: 'num' }, 'Turns'), h('th', { scope: 'col', class: 'num' }, 'Tokens'), h('th', { scope: 'col' }, 'Updated'))),
    tbody);
  keynav(table);
  const start = composer('First message of a new session', async (text) => {
    const r = await api('POST', base + '/sessions', { message: text });
    location.assign(`${agentPath(slug)}/sessions/${encodeURIComponent(r.sessionId)}`);
  });
  const devBox = h('section', { id: 'dev', 'aria-labelledby': 'dev-title' });
  main.replaceChildren(
    h('h1', {}, slug),
    h('p', { class: 'muted' }, 'model ', h('code', {}, info.model), ' · tools ', info.tools.join(', ') || 'none'),
    h('section', { 'aria-labelledby': 'new-title' }, h('h2', { id: 'new-title' }, 'New session'), start),
    h('section', { 'aria-labelledby': 'sessions-title' }, h('h2', { id: 'sessions-title' }, 'Sessions'),
      sessions.length ? table : h('p', { class: 'muted' }, 'No sessions yet.')),
    devBox);
  schedulesAndReminders(devBox, slug, dev);
}

async function schedulesAndReminders(box, slug, dev) {
  const base = agentPath(slug) + '/v1';
  box.replaceChildren(h('h2', { id: 'dev-title' }, dev ? 'Schedules and reminders (dev)' : 'Schedules'));
  try {
    const sch = await optional(base + '/schedules');
    const schedules = sch ? sch.schedules : [];
    if (!schedules.length) box.append(h('p', { class: 'muted' }, 'No schedules.'));
    else {
      const ul = h('ul', { class: 'plain', id: 'schedules' });
      for (const s of schedules) {
        const out = h('span', { class: 'fired' });
        const li = h('li', {}, h('strong', {}, s.id), ' ', h('code', {}, s.cron), ' next ', h('time', { datetime: s.next }, fmtTime(s.next) || '—'),
          s.lastError ? h('span', { class: 'error' }, ' last error: ' + s.lastError) : '', ' ');
        if (dev) {
          li.append(h('button', { type: 'button', class: 'fire', 'data-schedule': s.id, onclick: async (ev) => {
            ev.target.disabled = true;
            try {
              const r = await api('POST', `${base}/dev/schedules/${encodeURIComponent(s.id)}`);
              out.replaceChildren('started ', ...r.sessionIds.map((id) => h('a', { href: `${agentPath(slug)}/sessions/${encodeURIComponent(id)}` }, id)));
            } catch (e) { out.replaceChildren(errorBox(e)); } finally { ev.target.disabled = false; }
          } }, 'Fire now'));
        }
        li.append(out);
        ul.append(li);
      }
      box.append(ul);
    }
    if (!dev) return;
    const rem = await optional(base + '/dev/reminders');
    if (!rem) return;
    box.append(h('h3', {}, 'Reminders'));
    box.append(remindersList(slug, rem.reminders, true));
  } catch (e) {
    box.append(errorBox(e));
  }
}

function remindersList(slug, reminders, dev) {
  if (!reminders.length) return h('p', { class: 'muted' }, 'No reminders.');
  const base = agentPath(slug) + '/v1';
  const ul = h('ul', { class: 'plain reminders' });
  for (const r of reminders) {
    const out = h('span', { class: 'fired' });
    const when = r.delay || r.every || r.cron || '';
    const li = h('li', {},
      h('strong', {}, r.purpose || r.id), ' ', h('span', { class: 'muted' }, `${r.kind} ${when}`), ' next ',
      h('time', { datetime: r.nextFire }, fmtTime(r.nextFire) || '—'), ` · fired ${r.fireCount}×`,
      r.disarmed ? h('span', { class: 'error' }, ' disarmed: ' + r.disarmed) : '',
      ' session ', h('a', { href: `${agentPath(slug)}/sessions/${encodeURIComponent(r.sessionId)}` }, r.sessionId), ' ');
    if (dev && !r.disarmed) {
      li.append(h('button', { type: 'button', class: 'fire', onclick: async (ev) => {
        ev.target.disabled = true;
        try { await api('POST', `${base}/dev/reminders/${encodeURIComponent(r.id)}`); out.textContent = 'fired'; } catch (e) { out.replaceChildren(errorBox(e)); } finally { ev.target.disabled = false; }
      } }, 'Fire now'));
    }
    if (r.prompt) li.append(h('div', { class: 'muted clip' }, r.prompt));
    li.append(out);
    ul.append(li);
  }
  return ul;
}

// ---- Session ------------------------------------------------------------

// Transcript renders events as they come: one block per turn, tool calls
// folded with their results.
class Transcript {
  constructor(el, ctx) {
    this.el = el;
    this.ctx = ctx; // {onApproval(callId, allow)}
    this.calls = new Map(); // callId → {box, result, summary}
    this.approvals = new Map(); // callId → card
    this.turn = null; // the open turn's element
    this.turns = 0;
    this.openTurn = '';
    this.count = 0;
  }

  turnBox(ev) {
    if (this.turn && this.turn.dataset.turn === (ev.turnId || '')) return this.turn;
    this.turns++;
    const t = h('section', { class: 'turn', 'data-turn': ev.turnId || '', 'aria-label': 'Turn ' + this.turns },
      h('h2', { class: 'turn-title' }, `Turn ${this.turns}`));
    this.el.append(t);
    this.turn = t;
    return t;
  }

  add(events) {
    for (const ev of events) this.one(ev);
    this.count += events.length;
  }

  entry(ev, cls, ...kids) {
    const art = h('article', { class: 'entry ' + cls, tabindex: 0, 'data-nav': true, 'data-index': ev.index }, ...kids);
    this.turnBox(ev).append(art);
    return art;
  }

  one(ev) {
    const d = ev.data || {};
    switch (ev.type) {
      case 'message.received': {
        const label = d.reminderId ? `Reminder ${d.reminderId} (fire ${d.fireCount})` : 'You';
        this.entry(ev, 'user', h('h3', { class: 'who' }, label), markdown(d.text || ''));
        break;
      }
      case 'turn.started':
        this.openTurn = ev.turnId || '';
        this.turnBox(ev).querySelector('.turn-title').append(h('span', { class: 'muted' }, ' · ' + (d.model || '') + (d.dryRun ? ' · dry run' : '')));
        break;
      case 'message.completed':
        this.entry(ev, 'assistant', h('h3', { class: 'who' }, 'Agent'), markdown(d.text || ''));
        break;
      case 'actions.requested':
        for (const c of d.calls || []) this.call(ev, c);
        break;
      case 'action.result':
        this.result(ev, d);
        break;
      case 'turn.completed':
        this.openTurn = '';
        this.entry(ev, 'done', h('p', { class: 'usage' }, 'Turn completed · ' + usageText(d.usage)), checkpointLine(d.checkpoint));
        break;
      case 'turn.failed':
        this.openTurn = '';
        this.entry(ev, 'failed', h('p', { class: 'error', role: 'alert' }, 'Turn failed: ' + (d.message || '')), d.usage ? h('p', { class: 'usage' }, usageText(d.usage)) : '');
        break;
      case 'approval.requested':
        this.approval(ev, d);
        break;
      case 'approval.decided': {
        const card = this.approvals.get(d.callId);
        const text = `${d.decision || ''}${d.by ? ' by ' + d.by : ''}`;
        if (card) {
          card.classList.add('decided');
          card.querySelector('.decision').textContent = text;
          for (const b of card.querySelectorAll('button')) b.remove();
        } else this.entry(ev, 'approval decided', h('p', {}, `Approval of ${d.toolName || d.callId}: ${text}`));
        break;
      }
      case 'session.rewound':
        this.entry(ev, 'note', h('p', {}, 'Session rewound' + (d.toTurn !== undefined ? ` to turn ${d.toTurn}` : '')));
        break;
      default:
        this.entry(ev, 'note', h('p', { class: 'muted' }, ev.type));
    }
  }

  call(ev, c) {
    let args = c.rawArgs || '';
    let short = '';
    if (c.args !== undefined) {
      args = JSON.stringify(c.args, null, 2);
      if (c.args && typeof c.args === 'object') {
        const v = c.args.path ?? c.args.pattern ?? c.args.command ?? c.args.url ?? c.args.query;
        if (v !== undefined) short = String(v);
      }
    }
    if (short.length > 80) short = short.slice(0, 80) + '…';
    const status = h('span', { class: 'call-status' }, 'running…');
    const summary = h('summary', {}, h('span', { class: 'tool' }, c.toolName), short ? h('code', { class: 'call-arg' }, short) : '', ' ', status);
    const result = h('div', { class: 'result' });
    const box = h('details', { class: 'call', 'data-call': c.callId }, summary, h('h4', {}, 'Arguments'), folded(args, RESULT_FOLD, 'args'), h('h4', {}, 'Result'), result);
    this.entry(ev, 'tool', box);
    this.calls.set(c.callId, { box, result, status });
  }

  result(ev, d) {
    let c = this.calls.get(d.callId);
    if (!c) {
      this.call(ev, { callId: d.callId, toolName: d.toolName });
      c = this.calls.get(d.callId);
    }
    c.status.textContent = d.isError ? 'error' : d.stubbed ? 'stubbed' : 'done';
    if (d.isError) c.box.classList.add('is-error');
    c.result.replaceChildren(folded(d.output || '', RESULT_FOLD, d.isError ? 'output error' : 'output'));
    for (const img of d.images || []) {
      if (img.data && /^image\/(png|jpeg|gif|webp)$/.test(img.mimeType || '')) c.result.append(h('img', { src: `data:${img.mimeType};base64,${img.data}`, alt: 'image from ' + d.toolName }));
    }
  }

  approval(ev, d) {
    const decide = (allow) => async (e) => {
      e.target.disabled = true;
      try { await this.ctx.onApproval(d.callId, allow); } catch (err) { card.append(errorBox(err)); e.target.disabled = false; }
    };
    const card = this.entry(ev, 'approval',
      h('h3', { class: 'who' }, 'Approval needed'),
      h('p', {}, h('span', { class: 'tool' }, d.toolName || '')),
      folded(JSON.stringify(d.args ?? {}, null, 2), RESULT_FOLD, 'args'),
      h('div', { class: 'row' },
        h('button', { type: 'button', class: 'approve', onclick: decide(true) }, 'Approve'),
        h('button', { type: 'button', class: 'deny', onclick: decide(false) }, 'Deny')),
      h('p', { class: 'decision', role: 'status' }));
    this.approvals.set(d.callId, card);
  }
}

function checkpointLine(cp) {
  if (!cp) return '';
  if (cp.error) return h('p', { class: 'error' }, 'No checkpoint: ' + cp.error);
  return h('p', { class: 'muted' }, `Checkpoint of turn ${cp.turn}: ${cp.changed} path${cp.changed === 1 ? '' : 's'} changed`);
}

async function session(main, slug, id) {
  const abase = agentPath(slug) + '/v1';
  const base = `${abase}/sessions/${encodeURIComponent(id)}`;
  crumbs({ text: slug, href: agentPath(slug) + '/' }, { text: id });
  document.title = `${id} · ${slug} · july playground`;
  const meta = await api('GET', base);
  const head = h('div', { class: 'session-head' });
  const renderHead = (m) => head.replaceChildren(
    h('h1', {}, 'Session ', h('code', {}, m.id)),
    h('p', { class: 'muted' }, h('span', { class: 'state state-' + m.state, id: 'state' }, m.state), ` · ${fmtInt(m.turns)} turns · ${fmtInt(tokens(m.usage))} tokens · model `, h('code', {}, m.model),
      m.scheduleId ? ` · schedule ${m.scheduleId}` : '', m.forkOf ? ' · a fork' : ''));
  renderHead(meta);

  const log = h('div', { class: 'transcript', id: 'transcript', 'aria-label': 'Transcript', 'aria-live': 'off' });
  keynav(log);
  const cancel = h('button', { type: 'button', id: 'cancel', class: 'deny', disabled: true, onclick: async () => {
    cancel.disabled = true;
    try { await api('POST', base + '/cancel'); } catch (e) { if (!(e instanceof APIError && e.code === 'not_running')) log.append(errorBox(e)); }
  } }, 'Cancel turn');
  const form = composer('Message', (text) => api('POST', base + '/messages', { message: text }));
  form.querySelector('.row').append(cancel);

  const side = h('aside', { class: 'side', 'aria-label': 'Session tree and changes' });
  main.replaceChildren(h('div', { class: 'session' }, h('div', { class: 'main-col' }, head, log, form), side));

  const tr = new Transcript(log, { onApproval: (callId, allow) => api('POST', `${base}/approvals/${encodeURIComponent(callId)}`, { allow }) });
  const panels = new SidePanels(side, slug, id, base);
  panels.start();

  const abort = new AbortController();
  window.addEventListener('pagehide', () => abort.abort(), { once: true });
  let refresh = null;
  // Events are rendered at most once a frame (or every 100 ms in a hidden
  // tab): a stream delivers many small chunks, and each render reads the
  // layout to keep the view at the bottom.
  let pending = [];
  let scheduled = false;
  const render = () => {
    scheduled = false;
    const batch = pending;
    pending = [];
    if (!batch.length) return;
    const nearBottom = window.innerHeight + window.scrollY >= document.body.scrollHeight - 80;
    tr.add(batch);
    const running = tr.openTurn !== '';
    cancel.disabled = !running;
    document.body.dataset.events = String(tr.count);
    const st = $('#state');
    if (st) { st.textContent = running ? 'running' : 'idle'; st.className = 'state state-' + (running ? 'running' : 'idle'); }
    if (nearBottom && tr.count > batch.length) window.scrollTo(0, document.body.scrollHeight);
    if (batch.some((e) => e.type === 'turn.completed' || e.type === 'turn.failed' || e.type === 'session.rewound' || e.type.startsWith('approval.'))) {
      clearTimeout(refresh);
      refresh = setTimeout(() => {
        api('GET', base).then(renderHead).catch(() => {});
        panels.refresh();
      }, 200);
    }
    setStatus('');
  };
  follow(base, -1, (batch) => {
    for (const ev of batch) pending.push(ev);
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(render);
    setTimeout(render, 100);
  }, abort.signal);
}

// SidePanels are the session's side: its tree, and the checkpoints,
// approvals and reminders parts where the API has them.
class SidePanels {
  constructor(el, slug, id, base) {
    this.el = el;
    this.slug = slug;
    this.id = id;
    this.base = base;
    this.dir = '/';
    this.tree = h('section', { class: 'panel', id: 'tree', 'aria-labelledby': 'tree-title' });
    this.viewer = h('section', { class: 'panel', id: 'viewer', 'aria-label': 'File', hidden: true });
    this.changes = h('section', { class: 'panel', id: 'changes', 'aria-labelledby': 'changes-title', hidden: true });
    this.pending = h('section', { class: 'panel', id: 'approvals', 'aria-labelledby': 'approvals-title', hidden: true });
    this.reminders = h('section', { class: 'panel', id: 'reminders', 'aria-labelledby': 'reminders-title', hidden: true });
    el.append(this.pending, this.tree, this.viewer, this.changes, this.reminders);
  }

  start() { this.refresh(); }

  refresh() {
    this.list(this.dir);
    this.loadChanges();
    this.loadApprovals();
    this.loadReminders();
  }

  async list(dir) {
    this.dir = dir;
    const title = h('h2', { id: 'tree-title' }, 'Files ', h('code', {}, dir));
    try {
      const r = await api('GET', `${this.base}/tree?path=${encodeURIComponent(dir)}`);
      const ul = h('ul', { class: 'files' });
      if (dir !== '/') {
        const up = dir.replace(/\/[^/]+$/, '') || '/';
        ul.append(h('li', {}, h('button', { type: 'button', class: 'link', 'data-nav': true, onclick: () => this.list(up) }, '↑ ..')));
      }
      for (const e of r.entries) {
        const btn = h('button', { type: 'button', class: 'link ' + (e.dir ? 'dir' : 'file'), 'data-nav': true, 'data-path': e.path,
          onclick: () => (e.dir ? this.list(e.path) : this.open(e)) }, e.dir ? e.name + '/' : e.name);
        ul.append(h('li', {}, btn, e.dir ? '' : h('span', { class: 'size' }, fmtBytes(e.size))));
      }
      if (!r.entries.length) ul.append(h('li', { class: 'muted' }, 'empty'));
      keynav(ul);
      this.tree.replaceChildren(title, ul);
    } catch (e) {
      this.tree.replaceChildren(title, errorBox(e));
    }
  }

  async open(e) {
    const v = this.viewer;
    v.hidden = false;
    const close = h('button', { type: 'button', class: 'link', onclick: () => { v.hidden = true; v.replaceChildren(); } }, 'Close');
    const title = h('h2', {}, h('code', {}, e.path), ' ', h('span', { class: 'muted' }, fmtBytes(e.size)), ' ', close);
    v.replaceChildren(title, h('p', { class: 'muted' }, 'Loading…'));
    try {
      const resp = await request('GET', `${this.base}/file?path=${encodeURIComponent(e.path)}`);
      const type = resp.headers.get('Content-Type') || '';
      let body;
      if (type.startsWith('image/')) {
        const url = URL.createObjectURL(await resp.blob());
        body = h('img', { src: url, alt: e.name, class: 'view-img' });
        body.addEventListener('load', () => URL.revokeObjectURL(url), { once: true });
      } else if (type.startsWith('text/')) {
        const text = await resp.text();
        const ext = (e.name.match(/\.([^.]+)$/) || [])[1] || '';
        if (/^(md|markdown)$/i.test(ext) && text.length <= FILE_FOLD) body = h('div', { class: 'view-md' }, markdown(text));
        else if (LANGS[ext.toLowerCase()] && text.length <= FILE_FOLD) body = codeBlock(text, ext);
        else body = folded(text, FILE_FOLD, 'view-text');
      } else {
        body = h('p', { class: 'muted' }, `Binary file, ${fmtBytes(e.size)}.`);
      }
      v.replaceChildren(title, body);
      close.focus();
    } catch (err) {
      v.replaceChildren(title, errorBox(err));
    }
  }

  async loadChanges() {
    let r;
    try { r = await optional(`${this.base}/checkpoints`); } catch (e) { r = null; }
    if (!r) { this.changes.hidden = true; return; }
    this.changes.hidden = false;
    const list = h('ol', { class: 'plain checkpoints' });
    for (const cp of r.checkpoints || []) {
      const diffBox = h('div', { class: 'diff-box' });
      const files = (cp.files || []).map((f) => h('li', {}, h('code', {}, f.path), ' ', h('span', { class: 'change' }, f.change || ''), ' ',
        h('span', { class: 'add' }, '+' + (f.added || 0)), ' ', h('span', { class: 'del' }, '−' + (f.removed || 0))));
      list.append(h('li', { class: 'checkpoint' },
        h('h3', {}, `Turn ${cp.turn}`, cp.message ? h('span', { class: 'muted clip' }, ' · ' + cp.message) : ''),
        files.length ? h('ul', { class: 'plain' }, files) : h('p', { class: 'muted' }, 'no files changed'),
        h('div', { class: 'row' },
          h('button', { type: 'button', onclick: () => this.diff(cp.turn, diffBox) }, 'Diff'),
          h('button', { type: 'button', onclick: () => this.rewind(cp.turn) }, 'Rewind to here'),
          h('button', { type: 'button', onclick: () => this.fork(cp.turn) }, 'Fork from here')),
        diffBox));
    }
    this.changes.replaceChildren(h('h2', { id: 'changes-title' }, 'Changes per turn'), (r.checkpoints || []).length ? list : h('p', { class: 'muted' }, 'No checkpoints.'));
  }

  async diff(turn, box) {
    box.replaceChildren(h('p', { class: 'muted' }, 'Loading…'));
    try {
      const r = await api('GET', `${this.base}/diff?turn=${encodeURIComponent(turn)}`);
      box.replaceChildren(...(r.files || []).map(diffFile));
      if (!(r.files || []).length) box.replaceChildren(h('p', { class: 'muted' }, 'No changes.'));
    } catch (e) { box.replaceChildren(errorBox(e)); }
  }

  async rewind(turn) {
    if (!confirm(`Rewind the session to turn ${turn}? Later turns' changes are undone.`)) return;
    try { await api('POST', `${this.base}/rewind`, { to: turn }); this.refresh(); } catch (e) { this.changes.append(errorBox(e)); }
  }

  async fork(turn) {
    try {
      const r = await api('POST', `${this.base}/fork`, { at: turn });
      location.assign(`${agentPath(this.slug)}/sessions/${encodeURIComponent(r.sessionId)}`);
    } catch (e) { this.changes.append(errorBox(e)); }
  }

  async loadApprovals() {
    let r;
    try { r = await optional(`${this.base}/approvals`); } catch (e) { r = null; }
    const pending = r ? (r.approvals || []).filter((a) => !a.decision) : [];
    if (!r || !pending.length) { this.pending.hidden = true; return; }
    this.pending.hidden = false;
    const ul = h('ul', { class: 'plain' });
    for (const a of pending) {
      const out = h('span', { role: 'status' });
      const decide = (allow) => async () => {
        try { await api('POST', `${this.base}/approvals/${encodeURIComponent(a.callId)}`, { allow }); out.textContent = allow ? 'approved' : 'denied'; } catch (e) { out.replaceChildren(errorBox(e)); }
      };
      ul.append(h('li', {}, h('span', { class: 'tool' }, a.toolName || ''), folded(JSON.stringify(a.args ?? {}, null, 2), RESULT_FOLD, 'args'),
        h('div', { class: 'row' }, h('button', { type: 'button', class: 'approve', onclick: decide(true) }, 'Approve'), h('button', { type: 'button', class: 'deny', onclick: decide(false) }, 'Deny')), out));
    }
    this.pending.replaceChildren(h('h2', { id: 'approvals-title' }, 'Pending approvals'), ul);
  }

  async loadReminders() {
    let r, dev = false;
    try {
      r = await optional(`${this.base}/reminders`);
      const meta = await optional('/v1/agents');
      dev = !!(meta && meta.dev);
    } catch (e) { r = null; }
    if (!r || !r.reminders.length) { this.reminders.hidden = true; return; }
    this.reminders.hidden = false;
    this.reminders.replaceChildren(h('h2', { id: 'reminders-title' }, 'Reminders'), remindersList(this.slug, r.reminders, dev));
  }
}

// diffFile renders one file of a diff: its unified patch, line by line.
function diffFile(f) {
  const head = h('h4', {}, h('code', {}, f.path), ' ', h('span', { class: 'change' }, f.change || ''), ' ',
    h('span', { class: 'add' }, '+' + (f.added || 0)), ' ', h('span', { class: 'del' }, '−' + (f.removed || 0)));
  if (f.binary) return h('div', { class: 'diff' }, head, h('p', { class: 'muted' }, 'Binary file.'));
  const pre = h('pre', { class: 'patch' });
  for (const line of String(f.patch || '').split('\n')) {
    const cls = line.startsWith('@@') ? 'hunk' : line.startsWith('+++') || line.startsWith('---') ? 'file' : line.startsWith('+') ? 'add' : line.startsWith('-') ? 'del' : 'ctx';
    pre.append(h('span', { class: 'line ' + cls }, line + '\n'));
  }
  return h('div', { class: 'diff' }, head, pre);
}

// ---- Start --------------------------------------------------------------

async function main() {
  const el = $('#main');
  const r = route();
  try {
    if (r.view === 'home') await home(el);
    else if (r.view === 'agent') await agent(el, r.slug);
    else if (r.view === 'session') await session(el, r.slug, r.id);
    else el.replaceChildren(h('h1', {}, 'Not found'), h('p', {}, h('a', { href: '/' }, 'Back to the agents')));
  } catch (e) {
    el.replaceChildren(h('h1', {}, 'Error'), errorBox(e), h('p', {}, h('a', { href: '/' }, 'Back to the agents')));
  }
  document.body.dataset.ready = 'true';
}

main();
