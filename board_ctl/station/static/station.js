// The station's pages: live boards from the server-sent events, ticking clocks, the
// alert sound, the arbiter's actions. No framework: the pages are small.
"use strict";

const CSRF = (document.querySelector('meta[name="csrf"]') || {}).content || "";
let offsetMs = 0;            // the station's clock minus this browser's
const serverNow = () => Date.now() + offsetMs;

// ---- formatting ---------------------------------------------------------------------

const pad = (n) => String(n).padStart(2, "0");

function fmtClock(ms) {
  if (ms === null || ms === undefined) return "";
  ms = Math.max(0, ms);
  if (ms < 20000) {  // the last seconds in tenths, as a digital clock shows them
    const tenths = Math.floor(ms / 100);
    return `0:${pad(Math.floor(tenths / 10))}.${tenths % 10}`;
  }
  const s = Math.floor(ms / 1000);
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
  return h ? `${h}:${pad(m)}:${pad(sec)}` : `${m}:${pad(sec)}`;
}

function fmtTime(ms) {
  if (!ms) return "";
  const d = new Date(ms);
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "html") node.innerHTML = value;   // only the server's own SVG
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const resultText = (r) => r === "1/2-1/2" ? "½-½" : r;
const ALERT_NAMES = {
  "illegal-move": "Illegal move", "touch-move": "Touch move", "move-changed": "Move changed",
  "position-mismatch": "Pieces misplaced", "clock-no-move": "Clock without a move",
  "wrong-side": "Touched out of turn", "wrong-claim": "Wrong claim", "flag": "Flag fell",
  "clock-fault": "Clock fault",
};
const alertName = (code) => ALERT_NAMES[code] || code;

// ---- clocks -----------------------------------------------------------------------

function clocksAt(clock) {
  const spent = Math.max(0, serverNow() - clock.time_ms);
  return {
    white: clock.white_ms - (clock.running === "white" ? spent : 0),
    black: clock.black_ms - (clock.running === "black" ? spent : 0),
  };
}

function tickClocks() {
  for (const node of document.querySelectorAll("[data-clock]")) {
    const clock = JSON.parse(node.dataset.clock);
    const side = node.dataset.side;
    const ms = clocksAt(clock)[side];
    node.textContent = fmtClock(ms);
    node.classList.toggle("flag", ms <= 0);
    node.classList.toggle("low", ms > 0 && ms < 60000);
  }
}
setInterval(tickClocks, 100);

// ---- sound ------------------------------------------------------------------------

const sound = {
  ctx: null,
  on: localStorage.getItem("stationSound") === "on",
  button: document.getElementById("sound"),
  lastBeep: 0,
  show() {
    if (!this.button) return;
    this.button.textContent = this.on ? "Sound on" : "Sound off";
    this.button.setAttribute("aria-pressed", String(this.on));
    this.button.classList.toggle("active", this.on);
  },
  toggle() {
    this.on = !this.on;
    localStorage.setItem("stationSound", this.on ? "on" : "off");
    if (this.on) this.beep(true);
    this.show();
  },
  beep(force) {
    if (!this.on && !force) return;
    try {
      this.ctx = this.ctx || new (window.AudioContext || window.webkitAudioContext)();
      const now = this.ctx.currentTime;
      [0, 0.25].forEach((delay, i) => {
        const osc = this.ctx.createOscillator(), gain = this.ctx.createGain();
        osc.frequency.value = i ? 660 : 880;
        gain.gain.setValueAtTime(0.0001, now + delay);
        gain.gain.exponentialRampToValueAtTime(0.4, now + delay + 0.02);
        gain.gain.exponentialRampToValueAtTime(0.0001, now + delay + 0.2);
        osc.connect(gain).connect(this.ctx.destination);
        osc.start(now + delay); osc.stop(now + delay + 0.22);
      });
      this.lastBeep = Date.now();
    } catch (e) { /* no audio here: the page says it all without */ }
  },
};
if (sound.button) {
  sound.button.addEventListener("click", () => sound.toggle());
  sound.show();
}

// Alerts the arbiter has not acknowledged: a beep for each new one, again every 20 s
// while any stays unacknowledged, and the count in the tab's title.
const knownAlerts = new Set();
const titleBase = document.title;
function watchAlerts(boards) {
  let fresh = false, waiting = 0;
  for (const board of boards) {
    for (const alert of board.alerts || []) {
      if (alert.acknowledged_by) continue;
      waiting += 1;
      const key = `${board.id}|${board.game}|${alert.code}|${alert.raised_ms}`;
      if (!knownAlerts.has(key)) { knownAlerts.add(key); fresh = true; }
    }
  }
  document.title = waiting ? `(${waiting}) ${titleBase}` : titleBase;
  if (fresh || (waiting && Date.now() - sound.lastBeep > 20000)) sound.beep(false);
}

// ---- the feed ---------------------------------------------------------------------

const boards = new Map();

function connectFeed(url, onBoard, onSnapshot) {
  const source = new EventSource(url);
  source.onmessage = (event) => {
    const msg = JSON.parse(event.data);
    if (msg.now_ms) offsetMs = msg.now_ms - Date.now();
    if (msg.type === "snapshot") {
      boards.clear();
      for (const board of msg.boards) boards.set(board.id, board);
      showBroker(msg.broker.connected, msg.broker.error);
      onSnapshot(msg.boards);
    } else if (msg.type === "board") {
      boards.set(msg.board.id, msg.board);
      onBoard(msg.board);
    } else if (msg.type === "broker") {
      showBroker(msg.connected, msg.error);
    }
    watchAlerts([...boards.values()]);
  };
  source.onerror = () => showUnreachable();
}

function showBroker(connected, error) {
  const broker = document.getElementById("broker");
  if (!broker) return;
  broker.textContent = connected ? "live" : `broker down${error ? ": " + error : ""}`;
  broker.className = connected ? "broker up" : "broker down";
}

function showUnreachable() {
  const broker = document.getElementById("broker");
  if (broker) { broker.textContent = "station unreachable"; broker.className = "broker down"; }
}

// A page without the live feed (ladder, broadcast, pairings, journal): the badge from
// the station's state, asked now and every BROKER_POLL_MS.
const BROKER_POLL_MS = 10000;

async function watchBroker() {
  try {
    const response = await fetch("/api/boards", {cache: "no-store"});
    if (!response.ok) throw new Error(String(response.status));
    const state = await response.json();
    showBroker(state.broker.connected, state.broker.error);
  } catch (error) {
    showUnreachable();
  }
  setTimeout(watchBroker, BROKER_POLL_MS);
}

// ---- a board's card ---------------------------------------------------------------

function sideBlock(board, side) {
  const player = (board[side] || {});
  const clock = board.clock;
  const running = clock && clock.running === side && board.result === "*";
  const toMove = board.game && board.turn === side && board.result === "*";
  return el("div", {class: `side ${side}${running ? " running" : ""}${toMove ? " to-move" : ""}`},
    el("span", {class: "piece", "aria-hidden": "true"}, side === "white" ? "○" : "●"),
    el("span", {class: "name"}, player.name || (side === "white" ? "White" : "Black")),
    clock ? el("span", {class: "clock", "data-clock": JSON.stringify(clock), "data-side": side},
               fmtClock(clock[`${side}_ms`])) : null);
}

function cardNode(board, arbiter) {
  const alerts = board.alerts || [];
  const unseen = alerts.filter((a) => !a.acknowledged_by);
  const classes = ["card"];
  if (board.status === "offline") classes.push("offline");
  if (alerts.length) classes.push(unseen.length ? "alerting" : "alert-seen");
  if (board.result && board.result !== "*") classes.push("over");
  const number = board.board_no !== null && board.board_no !== undefined ? board.board_no : board.id;
  const href = arbiter ? `/arbiter/board/${board.id}` : `/board/${board.id}`;
  const status = board.status === "online" ? (board.link === "lost" ? "sensors lost" : "online")
               : board.status === "offline" ? "OFFLINE" : "no status";
  const node = el("article", {class: classes.join(" "), id: `card-${board.id}`, "data-board": board.id},
    el("header", {class: "card-head"},
      el("a", {class: "no", href, title: `board ${board.id}`}, String(number)),
      el("span", {class: `conn ${board.status}${board.link === "lost" ? " lost" : ""}`}, status),
      board.result && board.result !== "*" ? el("span", {class: "result"}, resultText(board.result)) : null,
      board.setting_up ? el("span", {class: "setup"}, "setting up the next game") : null),
    alerts.map((alert) => el("div", {class: `alertbar${alert.acknowledged_by ? " seen" : ""}`, role: "alert"},
      el("strong", {}, alertName(alert.code)),
      alert.side ? el("span", {class: "who"}, ` (${alert.side})`) : null,
      el("span", {class: "text"}, alert.text),
      alert.acknowledged_by ? el("span", {class: "ackby"}, `seen by ${alert.acknowledged_by}`)
        : arbiter ? el("button", {type: "button", class: "ack", "data-act": "ack", "data-code": alert.code}, "Seen") : null)),
    sideBlock(board, "black"),
    el("a", {class: "diagram", href, html: board.svg, "aria-label": "position"}),
    sideBlock(board, "white"),
    el("footer", {class: "card-foot"},
      el("span", {class: "last"}, board.last_move ? board.last_move.label : (board.game ? "no move yet" : "no game")),
      board.round ? el("span", {class: "round"}, `round ${board.round}`) : null,
      arbiter ? el("button", {type: "button", "data-act": "result", class: "small"}, "Result…") : null,
      arbiter && board.pending ? el("span", {class: "pending"}, `${board.pending} sent…`) : null));
  return node;
}

function sortKey(board) {
  const no = board.board_no;
  return [no === null || no === undefined ? 1 : 0, no || 0, board.id];
}
function compareBoards(a, b) {
  const ka = sortKey(a), kb = sortKey(b);
  for (let i = 0; i < 3; i++) { if (ka[i] < kb[i]) return -1; if (ka[i] > kb[i]) return 1; }
  return 0;
}

// ---- the grid ---------------------------------------------------------------------

function startGrid(grid) {
  const arbiter = grid.dataset.arbiter === "1";
  const render = () => {
    const sorted = [...boards.values()].sort(compareBoards);
    grid.replaceChildren(...(sorted.length ? sorted.map((b) => cardNode(b, arbiter))
                                           : [el("p", {class: "empty"}, "No board has reported yet.")]));
    tickClocks();
  };
  connectFeed(grid.dataset.feed, (board) => {
    const old = document.getElementById(`card-${board.id}`);
    if (old) { old.replaceWith(cardNode(board, arbiter)); tickClocks(); } else render();
  }, render);
  if (arbiter) grid.addEventListener("click", (event) => boardAction(event));
}

// ---- one board in full ------------------------------------------------------------

function table(headers, rows) {
  return el("table", {class: "table"},
    el("thead", {}, el("tr", {}, headers.map((h) => el("th", {}, h)))),
    el("tbody", {}, rows.length ? rows : el("tr", {}, el("td", {colspan: headers.length}, "None."))));
}

function movesTable(view) {
  const rows = [];
  let row = null;
  for (const move of view.moves) {
    const black = move.label.includes("...");
    const number = parseInt(move.label, 10);
    const cell = el("td", {class: "mv"}, move.san,
      move.clock_ms !== null ? el("span", {class: "clk"}, fmtClock(move.clock_ms)) : null);
    if (!black || !row) {
      row = el("tr", {}, el("td", {class: "num"}, `${number}.`), black ? el("td", {}, "…") : cell);
      rows.push(row);
      if (!black) continue;
    }
    row.append(cell);
    row = null;
  }
  const node = table(["", "White", "Black"], rows);
  if (view.missing_moves) node.append(el("caption", {}, `${view.missing_moves} moves not received yet`));
  return node;
}

function startDetail(section) {
  const boardId = section.dataset.board;
  const arbiter = section.dataset.arbiter === "1";
  let view = null;
  let inFlight = false, again = false;
  async function refresh() {
    if (inFlight) { again = true; return; }
    inFlight = true;
    try {
      const response = await fetch(section.dataset.api, {headers: {Accept: "application/json"}});
      if (response.ok) { view = await response.json(); offsetMs = view.now_ms - Date.now(); draw(); }
    } finally {
      inFlight = false;
      if (again) { again = false; refresh(); }
    }
  }
  function draw() {
    const holder = document.getElementById("detail-card");
    holder.replaceChildren(cardNode({...view, pending: (view.pending || []).length}, arbiter));
    holder.firstChild.classList.add("big");
    document.getElementById("moves").replaceChildren(movesTable(view));
    document.getElementById("clock-history").replaceChildren(table(
      ["Move", "White", "Black", "Used", ""],
      view.clock_history.map((c) => el("tr", {class: c.source},
        el("td", {}, c.label), el("td", {}, fmtClock(c.white_ms)), el("td", {}, fmtClock(c.black_ms)),
        el("td", {}, c.elapsed_ms !== null ? fmtClock(c.elapsed_ms) : ""),
        el("td", {}, c.source === "arbiter" ? "set by the arbiter" : "")))));
    const history = document.getElementById("alert-history");
    if (history) history.replaceChildren(table(["Raised", "Alert", "Side", "Text", "Seen by", "Cleared"],
      view.alert_history.map((a) => el("tr", {class: a.cleared_ms ? "" : "open"},
        el("td", {}, fmtTime(a.raised_ms)), el("td", {}, alertName(a.code)), el("td", {}, a.side || ""),
        el("td", {}, a.text), el("td", {}, a.acknowledged_by || ""), el("td", {}, a.cleared_ms ? fmtTime(a.cleared_ms) : "open")))));
    const journal = document.getElementById("journal");
    if (journal) journal.replaceChildren(table(["Time", "Who", "What", ""],
      view.journal.slice().reverse().map((e) => el("tr", {class: e.kind === "reply" && !e.ok ? "refused" : e.kind},
        el("td", {}, fmtTime(e.time)), el("td", {}, e.user || (e.kind === "reply" ? "board" : "")),
        el("td", {}, e.kind === "reply" ? (e.ok ? "done" : `refused: ${e.error}`) : (e.command || e.kind)),
        el("td", {}, e.payload ? JSON.stringify(e.payload) : (e.result || ""))))));
    const form = document.getElementById("clock-form");
    if (form && view.clock && !form.dataset.touched) {
      const now = clocksAt(view.clock);
      form.white.value = fmtClock(now.white); form.black.value = fmtClock(now.black);
    }
    tickClocks();
  }
  connectFeed(section.dataset.feed, (board) => { if (board.id === boardId) refresh(); }, refresh);
  if (arbiter) {
    section.addEventListener("click", (event) => boardAction(event, boardId));
    const form = document.getElementById("clock-form");
    form.addEventListener("input", () => { form.dataset.touched = "1"; });
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const reply = await post(`/arbiter/board/${boardId}/clock`, {white: form.white.value, black: form.black.value});
      showError(document.getElementById("action-error"), reply.error);
      if (!reply.error) delete form.dataset.touched;
    });
  }
}

// ---- the arbiter's actions --------------------------------------------------------

async function post(url, fields) {
  const body = new URLSearchParams({csrf: CSRF, ...fields});
  try {
    const response = await fetch(url, {method: "POST", body, headers: {"X-CSRF-Token": CSRF, Accept: "application/json"}});
    const data = await response.json().catch(() => ({error: `HTTP ${response.status}`}));
    if (!response.ok && !data.error) data.error = `HTTP ${response.status}`;
    return data;
  } catch (e) {
    return {error: "the station cannot be reached"};
  }
}

function showError(node, text) {
  if (!node) return;
  node.hidden = !text;
  node.textContent = text || "";
}

async function boardAction(event, fixedBoard) {
  const button = event.target.closest("button[data-act]");
  if (!button) return;
  const card = button.closest("[data-board]");
  const boardId = fixedBoard || (card && card.dataset.board);
  if (!boardId) return;
  if (button.dataset.act === "ack") {
    button.disabled = true;
    button.textContent = "sending…";
    const reply = await post(`/arbiter/board/${boardId}/ack`, {code: button.dataset.code});
    if (reply.error) { button.disabled = false; button.textContent = "Seen"; alert(reply.error); }
  } else if (button.dataset.act === "result") {
    openResultDialog(boardId);
  }
}

function openResultDialog(boardId) {
  const dialog = document.getElementById("result-dialog");
  const form = document.getElementById("result-form");
  const board = boards.get(boardId) || {};
  const field = (name) => dialog.querySelector(`[data-field="${name}"]`);
  const button = (name) => dialog.querySelector(`[data-act="${name}"]`);
  form.reset();
  field("board").textContent = board.board_no !== null && board.board_no !== undefined ? board.board_no : boardId;
  field("players").textContent = `${(board.white || {}).name || "White"} - ${(board.black || {}).name || "Black"}`;
  field("confirm").hidden = true;
  showError(field("error"), "");
  button("next").hidden = false;
  button("confirm").hidden = true;
  form.querySelectorAll("input").forEach((i) => { i.disabled = false; });
  let token = null;
  form.onsubmit = async (event) => {
    event.preventDefault();
    const reply = await post(`/arbiter/board/${boardId}/result`,
                             {result: form.result.value, reason: form.reason.value});
    if (reply.error) { showError(field("error"), reply.error); return; }
    token = reply.token;
    field("confirm").textContent = reply.confirm;
    field("confirm").hidden = false;
    form.querySelectorAll("input").forEach((i) => { i.disabled = true; });
    button("next").hidden = true;
    button("confirm").hidden = false;
    button("confirm").focus();
  };
  button("confirm").onclick = async () => {
    const reply = await post(`/arbiter/board/${boardId}/result`,
                             {result: form.result.value, reason: form.reason.value, confirm: token});
    if (reply.error) { showError(field("error"), reply.error); return; }
    dialog.close();
  };
  button("cancel").onclick = () => dialog.close();
  dialog.showModal();
}

// ---- start ------------------------------------------------------------------------

for (const node of document.querySelectorAll(".journal .time[data-ms]")) {
  node.textContent = new Date(Number(node.dataset.ms)).toLocaleString();
}
const grid = document.getElementById("grid");
if (grid) startGrid(grid);
const detailSection = document.getElementById("detail");
if (detailSection) startDetail(detailSection);
if (!grid && !detailSection) watchBroker();
