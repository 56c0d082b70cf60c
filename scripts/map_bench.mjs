// Frame times of the report's map while it is zoomed and panned, in headless Chromium
// driven over the DevTools protocol (no package needed: Node's WebSocket).
//
//   node --experimental-websocket scripts/map_bench.mjs PAGE.html [PAGE2.html ...]
//   BENCH_EVENTS=50 BENCH_RUNS=3 CHROMIUM=/usr/bin/chromium
//
// For each page and run: 50 wheel events at the map's centre (zoom in, then out, in
// turns of five), then 50 mouse moves with the button held (a pan), each dispatched as
// real input and awaited. The page records every animation frame's timestamp meanwhile;
// the figures are the gaps between consecutive frames while the events last (a frame
// the page cannot finish in time shows as a long gap). Prints one line per page, run
// and gesture: frames, median, 95th percentile and largest gap in ms.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const pages = process.argv.slice(2);
if (!pages.length) {
  console.error("usage: node --experimental-websocket scripts/map_bench.mjs PAGE.html ...");
  process.exit(2);
}
const EVENTS = +(process.env.BENCH_EVENTS || 50);
const RUNS = +(process.env.BENCH_RUNS || 3);
const CHROMIUM = process.env.CHROMIUM || "chromium";

function launch() {
  const profile = mkdtempSync(join(tmpdir(), "map-bench-"));
  const proc = spawn(CHROMIUM, [
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--window-size=1400,1000", "--remote-debugging-port=0",
    `--user-data-dir=${profile}`, "about:blank",
  ], { stdio: ["ignore", "ignore", "pipe"] });
  return new Promise((ok, fail) => {
    let err = "";
    proc.stderr.on("data", (b) => {
      err += b;
      const m = /DevTools listening on (ws:\/\/\S+)/.exec(err);
      if (m) ok({ proc, profile, port: new URL(m[1]).port });
    });
    proc.on("exit", (c) => fail(new Error(`chromium exited ${c}: ${err}`)));
  });
}

function connect(url) {
  const ws = new WebSocket(url);
  let id = 0;
  const waiting = new Map();
  ws.onmessage = (ev) => {
    const msg = JSON.parse(ev.data);
    const w = waiting.get(msg.id);
    if (!w) return;
    waiting.delete(msg.id);
    if (msg.error) w[1](new Error(JSON.stringify(msg.error)));
    else w[0](msg.result);
  };
  const send = (method, params = {}) => new Promise((ok, fail) => {
    id += 1;
    waiting.set(id, [ok, fail]);
    ws.send(JSON.stringify({ id, method, params }));
  });
  return new Promise((ok) => { ws.onopen = () => ok({ ws, send }); });
}

async function evaluate(send, expression) {
  const r = await send("Runtime.evaluate", { expression, awaitPromise: true, returnByValue: true });
  if (r.exceptionDetails) throw new Error(JSON.stringify(r.exceptionDetails));
  return r.result.value;
}

const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

function stats(gaps) {
  const s = gaps.slice().sort((a, b) => a - b);
  const q = (p) => s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)];
  return { frames: s.length, median: q(0.5), p95: q(0.95), max: s[s.length - 1] };
}

async function metrics(send) {
  const m = await send("Performance.getMetrics");
  return Object.fromEntries(m.metrics.map((x) => [x.name, x.value]));
}

async function gesture(send, name, events) {
  // One recording loop per gesture: a generation number stops the previous one.
  await evaluate(send, `window.__frames = []; (function (gen) {
    window.__gen = gen;
    (function loop(t) { if (window.__gen !== gen) return; window.__frames.push(t); requestAnimationFrame(loop); })(performance.now());
  })((window.__gen || 0) + 1); 1`);
  await sleep(100);
  await evaluate(send, `window.__mark = performance.now(); 1`);
  const before = await metrics(send);
  if (events.length) for (const e of events) await send("Input.dispatchMouseEvent", e);
  else await sleep(1000);
  // Let the last frame land, then stop recording.
  await evaluate(send, `new Promise(function (ok) { requestAnimationFrame(function () { requestAnimationFrame(function () { window.__end = performance.now(); window.__gen += 1; ok(1); }); }); })`);
  const after = await metrics(send);
  const cost = {};
  for (const k of ["ScriptDuration", "RecalcStyleDuration", "LayoutDuration", "TaskDuration"]) {
    cost[k] = (after[k] - before[k]) * 1000;
  }
  const frames = await evaluate(send, `window.__frames.filter(function (t) { return t >= window.__mark && t <= window.__end; })`);
  const gaps = frames.slice(1).map((t, i) => t - frames[i]);
  return { name, cost, ...stats(gaps) };
}

async function bench(port, page) {
  const t = await (await fetch(`http://127.0.0.1:${port}/json/new?file://${resolve(page)}`, { method: "PUT" })).json();
  const { ws, send } = await connect(t.webSocketDebuggerUrl);
  await send("Runtime.enable");
  await send("Performance.enable");
  for (let i = 0; i < 100; i++) {
    if (await evaluate(send, `document.body && document.body.dataset.ready === "1"`)) break;
    await sleep(100);
  }
  const box = await evaluate(send, `(function () {
    var m = document.querySelector("svg.map[data-zoom]");
    m.scrollIntoView({ block: "center" });
    var r = m.getBoundingClientRect();
    return [r.left + r.width / 2, r.top + r.height / 2, r.width];
  })()`);
  const [x, y, w] = box;
  const out = [];
  for (let run = 0; run < RUNS; run++) {
    // The frames of the page left alone: what the machine gives at best.
    out.push(await gesture(send, "idle", []));
    const wheel = Array.from({ length: EVENTS }, (_, i) => ({
      type: "mouseWheel", x, y, deltaX: 0, deltaY: Math.floor(i / 5) % 2 ? 100 : -100,
    }));
    out.push(await gesture(send, "zoom", wheel));
    const drag = [{ type: "mousePressed", x, y, button: "left", clickCount: 1 }];
    for (let i = 1; i <= EVENTS; i++) {
      const dx = Math.sin(i / 8) * w * 0.2;
      drag.push({ type: "mouseMoved", x: x + dx, y: y + dx / 3, button: "left", buttons: 1 });
    }
    drag.push({ type: "mouseReleased", x, y, button: "left", clickCount: 1 });
    out.push(await gesture(send, "pan", drag));
  }
  const errors = await evaluate(send, `(window.__errors || []).length`);
  ws.close();
  await fetch(`http://127.0.0.1:${port}/json/close/${t.id}`);
  return { out, errors };
}

const { proc, profile, port } = await launch();
try {
  for (const page of pages) {
    const { out, errors } = await bench(port, page);
    for (const r of out) {
      console.log(`${page}\t${r.name}\tframes ${r.frames}\tmedian ${r.median.toFixed(1)} ms\tp95 ${r.p95.toFixed(1)} ms\tmax ${r.max.toFixed(1)} ms\tmain thread: script ${r.cost.ScriptDuration.toFixed(0)} style ${r.cost.RecalcStyleDuration.toFixed(0)} layout ${r.cost.LayoutDuration.toFixed(0)} all tasks ${r.cost.TaskDuration.toFixed(0)} ms`);
    }
    if (errors) console.log(`${page}\tscript errors: ${errors}`);
  }
} finally {
  proc.kill();
  await sleep(200);
  rmSync(profile, { recursive: true, force: true });
}
