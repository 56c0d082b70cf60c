// bcwire report: the zoom that re-bins. The page's time window (brushed on any time
// chart) and the chosen interval draw the rate and transport charts again from counts
// per fine tick, in bins of that interval over that window, as Wireshark's I/O graph
// does; and the marks of joins, leaves, kills, chat lines and retransmission bursts on
// them. Runs after page.js, whose state it reads (window.__bcw).
(function () {
  "use strict";
  var B = window.__bcw;
  if (!B) return;
  var el = B.el;
  // Intervals the "auto" choice and a too-fine choice step through.
  var STEPS = [0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600, 86400];
  // More bins than this are not drawn: the interval grows (and the page says so).
  var MAX_BINS = 4000;
  var KINDS = {
    join: ["▲", "#2ca02c", "join"], leave: ["▼", "#7f7f7f", "leave"], kill: ["✕", "#d62728", "kill"],
    "kill-unscored": ["✕", "#d62728", "kill"], chat: ["●", "#1f77b4", "chat"], burst: ["◆", "#ff7f0e", "retransmission burst"]
  };
  var sel = document.getElementById("interval"), note = document.getElementById("interval-note");
  var charts = [];

  // Sparse [gap, value…] runs to absolute ticks and values (`width` values an entry).
  function unpack(v, width) {
    var ticks = [], vals = [], k = 0;
    for (var i = 0; i + width <= v.length; i += width) {
      k += v[i];
      ticks.push(k);
      vals.push(v.slice(i + 1, i + width));
    }
    return { t: ticks, v: vals };
  }
  function fmtT(t) { return t.toFixed(Math.abs(t) < 100 ? 1 : 0); }
  var niceStep = B.niceStep;
  function tickLabel(v, step) { return B.tickText(v, step, 3); }

  Array.prototype.forEach.call(document.querySelectorAll("svg[data-chart][data-time]"), function (svg) {
    var id = svg.getAttribute("data-chart"), f = B.data[id + "-fine"], d = B.data[id];
    if (!f || !d) return;
    var width = f.k === "ack" ? 4 : 2;
    f.s.forEach(function (s) { s.u = unpack(s.v, width); });
    // The page's own drawing goes into one group the zoom hides; the window's shade
    // stays where page.js keeps it.
    var orig = el("g", { "class": "orig" });
    Array.prototype.slice.call(svg.childNodes).forEach(function (k) {
      if (!(k.getAttribute && /\bwin\b/.test(k.getAttribute("class") || ""))) orig.appendChild(k);
    });
    svg.insertBefore(orig, svg.firstChild);
    var zoom = el("g", { "class": "rebin" });
    svg.insertBefore(zoom, orig.nextSibling);
    var marks = el("g", { "class": "marks" });
    svg.insertBefore(marks, zoom.nextSibling);
    var legend = svg.nextElementSibling && svg.nextElementSibling.classList.contains("legend") ? svg.nextElementSibling : null;
    var d0 = {};
    for (var key in d) d0[key] = d[key];
    d0.t0 = 0;
    charts.push({
      svg: svg, id: id, f: f, d: d, d0: d0, orig: orig, zoom: zoom, marks: marks,
      time0: svg.getAttribute("data-time"), cap: id.split("-")[0], legend: legend,
      legend0: legend ? Array.prototype.map.call(legend.children, function (s) { return s.lastChild ? s.lastChild.textContent : ""; }) : []
    });
  });

  // The bin width: the choice, but no finer than the data's tick and no more than
  // MAX_BINS bins; "auto" about as many bins as the page's own chart has columns.
  function binWidth(c, span) {
    var choice = sel ? sel.value : "auto", tick = c.f.tick, w;
    var floor = function (x) { return Math.max(x, tick); };
    if (choice === "auto") {
      var want = 120;
      w = STEPS.filter(function (s) { return s >= tick - 1e-9 && span / s <= want; })[0] || span;
      return { w: w, why: "" };
    }
    w = floor(+choice);
    var why = w > +choice ? "finest here: " + w + " s" : "";
    if (span / w > MAX_BINS) {
      w = STEPS.filter(function (s) { return s >= w && span / s <= MAX_BINS; })[0] || span;
      why = "too many bins: " + w + " s";
    }
    return { w: w, why: why };
  }

  function geometry(c) {
    var a = c.time0.split(" ").map(Number);
    return { px0: a[0], px1: a[1], t0: a[2], t1: a[3], top: a[4], bottom: a[5] };
  }

  // Sums of each series per bin over [a, b): counts (stack, rate) or ACK count, delay
  // sum and largest delay (ack). Ticks are compared in whole milliseconds.
  function bins(c, a, b, w, n) {
    var tms = Math.round(c.f.tick * 1000), ams = a * 1000, bms = b * 1000, wms = w * 1000;
    return c.f.s.map(function (s) {
      var out = [];
      for (var i = 0; i < n; i++) out.push(c.f.k === "ack" ? [0, 0, 0] : 0);
      for (var j = 0; j < s.u.t.length; j++) {
        var tt = s.u.t[j] * tms;
        if (tt < ams || tt >= bms) continue;
        var i2 = Math.min(n - 1, Math.floor((tt - ams) / wms)), v = s.u.v[j];
        if (c.f.k === "ack") {
          out[i2][0] += v[0]; out[i2][1] += v[1]; out[i2][2] = Math.max(out[i2][2], v[2]);
        } else out[i2] += v[0];
      }
      return out;
    });
  }

  function drawAxes(c, g, G, a, b, ymax) {
    var ax = el("g", { "class": "axes" }, g);
    var ys = niceStep(ymax, 5), xs = niceStep(b - a, 10);
    var py = function (v) { return G.bottom - v / ymax * (G.bottom - G.top); };
    var px = function (t) { return G.px0 + (t - a) / (b - a) * (G.px1 - G.px0); };
    for (var v = 0; v <= ymax + 1e-9; v += ys) {
      el("line", { x1: G.px0, x2: G.px1, y1: py(v), y2: py(v) }, ax);
      el("text", { x: G.px0 - 4, y: py(v) + 4, "text-anchor": "end" }, ax).textContent = tickLabel(v, ys);
    }
    for (var t = Math.ceil(a / xs) * xs; t <= b + 1e-9; t += xs) {
      el("line", { x1: px(t), x2: px(t), y1: G.top, y2: G.bottom }, ax);
      el("text", { x: px(t), y: G.bottom + 14, "text-anchor": "middle" }, ax).textContent = tickLabel(t, xs);
    }
    Array.prototype.forEach.call(c.orig.querySelectorAll("g.axes text.title"), function (tt) { ax.appendChild(tt.cloneNode(true)); });
    return { px: px, py: py };
  }

  // The page's own drawing of the whole capture.
  function restore(c, G) {
    c.orig.style.display = "";
    c.svg.setAttribute("data-time", c.time0);
    for (var k in c.d0) c.d[k] = c.d0[k];
    c.svg.removeAttribute("data-bins");
    c.svg.removeAttribute("data-bin-width");
    c.svg.removeAttribute("data-window-count");
    if (c.legend) Array.prototype.forEach.call(c.legend.children, function (s, i) { if (s.lastChild && c.legend0[i]) s.lastChild.textContent = c.legend0[i]; });
    drawMarks(c, G, G.t0, G.t1);
  }

  // The bins of a chart for the window and interval: sums, their spans, the values
  // drawn and their peak (null: the page's own drawing).
  function prepare(c) {
    var G = geometry(c), win = B.state.win, auto = !sel || sel.value === "auto";
    if (!win && auto) return null;
    var a = win ? Math.max(G.t0, win[0]) : G.t0, b = win ? Math.min(G.t1, win[1]) : G.t1;
    if (!(b > a)) b = a + c.f.tick;
    var bw = binWidth(c, b - a), w = bw.w;
    var n = Math.max(1, Math.ceil((b - a) / w - 1e-9));
    var sums = bins(c, a, b, w, n), end = c.f.end, spans = [], i;
    for (i = 0; i < n; i++) {
      var lo = a + i * w, hi = Math.min(lo + w, b);
      spans.push(lo < end && end < hi ? Math.max(end - lo, w / 4) : Math.max(hi - lo, w / 4));
    }
    var P = { G: G, a: a, b: b, w: w, n: n, why: bw.why, sums: sums, spans: spans, total: 0, ymax: 0, lines: [], stack: [] };
    if (c.f.k === "stack") {
      for (i = 0; i < n; i++) {
        var s = 0;
        sums.forEach(function (v) { s += v[i]; });
        P.stack.push(s);
        P.total += s;
        P.ymax = Math.max(P.ymax, s / spans[i]);
      }
    } else {
      // Lines: a rate per series (rate), or mean and largest delay per direction (ack).
      sums.forEach(function (v, k) {
        var f = c.f.s[k];
        if (c.f.k === "ack") {
          P.lines.push({ n: f.n[0], c: f.c[0], y: v.map(function (x) { return x[0] ? x[1] / x[0] / 1000 : NaN; }) });
          P.lines.push({ n: f.n[1], c: f.c[1], y: v.map(function (x) { return x[0] ? x[2] / 1000 : NaN; }) });
        } else {
          v.forEach(function (x) { P.total += x; });
          P.lines.push({ n: f.n, c: f.c, y: v.map(function (x, i) { return x / spans[i]; }), v: v });
        }
      });
      P.lines.forEach(function (l) { l.y.forEach(function (y) { if (y > P.ymax) P.ymax = y; }); });
    }
    return P;
  }

  // Draw the bins; `ymax` is the peak over every capture's chart of this kind, so the
  // two captures of a comparison keep one scale.
  function render(c, P, ymax) {
    var G = P.G, a = P.a, b = P.b, w = P.w, n = P.n, sums = P.sums, spans = P.spans, i, e;
    var edges = function (i) { return [a + i * w, Math.min(a + (i + 1) * w, b)]; };
    var hover = [], g = c.zoom, ax;
    if (c.f.k === "stack") {
      ax = drawAxes(c, g, G, a, b, Math.max(ymax, 1) * 1.05);
      var base = sums[0].map(function () { return 0; });
      sums.forEach(function (v, k) {
        var top = base.map(function (x, i) { return x + v[i]; }), p = "";
        for (i = 0; i < n; i++) {
          e = edges(i);
          p += (i ? "L" : "M") + ax.px(e[0]).toFixed(1) + "," + ax.py(top[i] / spans[i]).toFixed(1) + "H" + ax.px(e[1]).toFixed(1);
        }
        for (i = n - 1; i >= 0; i--) {
          e = edges(i);
          p += "L" + ax.px(e[1]).toFixed(1) + "," + ax.py(base[i] / spans[i]).toFixed(1) + "H" + ax.px(e[0]).toFixed(1);
        }
        el("path", { "data-series": c.f.s[k].n, d: p + "Z", fill: c.f.s[k].c, "fill-opacity": "0.85" }, g);
        hover.push({ n: c.f.s[k].n, v: v });
        base = top;
      });
      if (c.legend) {
        Array.prototype.forEach.call(c.legend.children, function (sp, k) {
          if (!sp.lastChild || !c.f.s[k]) return;
          var t = sums[k].reduce(function (x, y) { return x + y; }, 0);
          sp.lastChild.textContent = c.f.s[k].n + " (" + t + ")";
        });
      }
    } else {
      ax = drawAxes(c, g, G, a, b, Math.max(ymax, 1) * 1.1);
      P.lines.forEach(function (l) {
        var pts = [];
        var flush = function () {
          if (pts.length === 1) el("circle", { "data-series": l.n, cx: pts[0][0], cy: pts[0][1], r: 2.5, fill: l.c }, g);
          else if (pts.length) el("polyline", { "data-series": l.n, stroke: l.c, points: pts.map(function (p) { return p.join(","); }).join(" ") }, g);
          pts = [];
        };
        for (i = 0; i < n; i++) {
          if (!isFinite(l.y[i])) { flush(); continue; }
          e = edges(i);
          pts.push([ax.px((e[0] + e[1]) / 2).toFixed(1), ax.py(l.y[i]).toFixed(1)]);
        }
        flush();
        hover.push({ n: l.n, v: c.f.k === "ack" ? l.y.map(function (y) { return isFinite(y) ? Math.round(y * 1000) / 1000 : null; }) : l.v });
      });
    }
    c.orig.style.display = "none";
    c.svg.setAttribute("data-time", [G.px0, G.px1, a, b, G.top, G.bottom].join(" "));
    // The shade page.js drew was for the old axis: the axis is the window now.
    var shade = c.svg.querySelector("g.win");
    if (shade) while (shade.firstChild) shade.removeChild(shade.firstChild);
    c.svg.setAttribute("data-bins", n);
    c.svg.setAttribute("data-bin-width", w);
    c.svg.setAttribute("data-window-count", P.total);
    var d = c.d;
    d.x0 = G.px0; d.x1 = G.px1; d.t0 = a; d.t1 = b; d.e = Math.min(c.f.end, b); d.w = w; d.n = n; d.s = hover;
    if (c.f.k === "ack") d.rate = false;
    drawMarks(c, G, a, b);
  }

  // One mark per event; events of a kind closer than MERGE_PX on screen share one mark
  // (its count and hover list them), and a mark too close to one of another kind moves
  // down a lane, so that dense hours stay readable.
  var MERGE_PX = 8, LANE_PX = 11;
  function drawMarks(c, G, a, b) {
    var g = c.marks;
    while (g.firstChild) g.removeChild(g.firstChild);
    var evs = B.data[c.cap + "-events"] || [];
    var k = (G.px1 - G.px0) / (b - a);
    var groups = [], last = {};
    evs.forEach(function (e) {
      var t = e[0], kind = e[1] === "kill-unscored" ? "kill" : e[1];
      if (!KINDS[e[1]] || t < a || t > b) return;
      var x = G.px0 + (t - a) * k, scored = e[1] === "kill" ? 1 : 0;
      var key = kind + scored, m = last[key];
      if (m && x - m.x < MERGE_PX) { m.x1 = x; m.t1 = t; m.texts.push(e[2]); return; }
      m = { kind: kind, src: e[1], scored: scored, x: x, x1: x, t: t, t1: t, texts: [e[2]] };
      last[key] = m;
      groups.push(m);
    });
    groups.sort(function (p, q) { return p.x - q.x; });
    var lanes = [];
    groups.forEach(function (m) {
      var lane = 0;
      while (lane < 4 && lanes[lane] !== undefined && m.x - lanes[lane] < LANE_PX) lane++;
      lanes[lane] = m.x1;
      var kind = KINDS[m.src], n = m.texts.length;
      var el2 = el("text", {
        "class": "mark", "data-mark": m.kind, "data-scored": String(m.scored), "data-count": n,
        x: m.x.toFixed(1), y: G.top + 10 + lane * LANE_PX, "text-anchor": "middle", fill: kind[1], style: "font-size:11px;cursor:default"
      }, g);
      el2.textContent = kind[0];
      var what = n === 1 ? kind[2] + " at " + fmtT(m.t) + " s" : n + " × " + kind[2] + " at " + fmtT(m.t) + "–" + fmtT(m.t1) + " s";
      var lines = [what].concat(m.texts.slice(0, 8));
      if (n > 8) lines.push("… " + (n - 8) + " more");
      el("title", {}, el2).textContent = lines.join("\n");
      el2.addEventListener("mousemove", function (ev) { ev.stopPropagation(); B.show(lines, ev); });
    });
  }

  // The map legends' point counts: those of each life inside the window.
  var legends = Array.prototype.map.call(document.querySelectorAll(".map-legend[data-map]"), function (lg) {
    var spans = Array.prototype.map.call(lg.querySelectorAll(".win-points"), function (sp) { return [sp, sp.textContent]; });
    return { lg: lg, d: B.data[lg.getAttribute("data-map")], spans: spans };
  });
  function legendCounts() {
    var win = B.state.win;
    legends.forEach(function (L) {
      if (!win || !L.d) {
        L.spans.forEach(function (p) { p[0].textContent = p[1]; p[0].parentNode.removeAttribute("data-win"); });
        return;
      }
      Array.prototype.forEach.call(L.lg.querySelectorAll(".group[data-group]"), function (g) {
        var sum = 0;
        Array.prototype.forEach.call(g.querySelectorAll("li[data-k]"), function (li) {
          var s = L.d.s[+li.getAttribute("data-k")], n = 0;
          if (s && s.p) s.p.forEach(function (p) { if (p[2] >= win[0] && p[2] <= win[1]) n++; });
          sum += n;
          var sp = li.querySelector(".win-points");
          if (sp) { sp.textContent = n; li.setAttribute("data-win", "1"); }
        });
        var top = g.querySelector("summary .win-points");
        if (top) { top.textContent = sum; top.parentNode.setAttribute("data-win", "1"); }
      });
    });
  }

  function redraw() {
    legendCounts();
    var why = "", peaks = {};
    var prepared = charts.map(function (c) {
      while (c.zoom.firstChild) c.zoom.removeChild(c.zoom.firstChild);
      var P = prepare(c), role = c.id.replace(/^[^-]*-/, "");
      if (P) { peaks[role] = Math.max(peaks[role] || 0, P.ymax); why = P.why || why; }
      return [c, P, role];
    });
    prepared.forEach(function (x) {
      if (x[1]) render(x[0], x[1], peaks[x[2]]); else restore(x[0], geometry(x[0]));
    });
    if (note) note.textContent = why ? "(" + why + ")" : "";
    document.body.dataset.interval = sel ? sel.value : "auto";
  }
  document.addEventListener("bcw-update", redraw);
  if (sel) sel.addEventListener("change", redraw);
  redraw();
})();
