// bcwire report: hover read-outs, map zoom, one time window and one chosen player for
// the whole page. Plain JS, no network, no markup from data: every text from the
// capture is written with textContent.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("bcw-data").textContent);
  var tip = document.getElementById("tip");
  var NS = "http://www.w3.org/2000/svg";
  // The page's state: a time window [from, to] in seconds (null: everything) and the
  // chosen player ("" : everyone). Every view reads it; `update` redraws them all.
  // The chosen session ("": all); the map shows one session at a time, the first when
  // all are chosen.
  var state = { win: null, player: "", session: "" };
  var maps = [];
  var sessionSel = document.getElementById("session");
  if (sessionSel) state.session = sessionSel.value;
  function inWin(t) { return !state.win || (t >= state.win[0] && t <= state.win[1]); }
  function playerShown(p) { return !state.player || p === null || p === undefined || p === state.player; }
  function mapSession() { return state.session || (sessionSel ? sessionSel.getAttribute("data-first") : ""); }
  function sessionShown(se, onMap) {
    var s = onMap ? mapSession() : state.session;
    return !s || se === null || se === undefined || String(se) === s;
  }

  function fmt(v) {
    if (v === null || v === undefined) return "-";
    if (typeof v !== "number") return String(v);
    var a = Math.abs(v);
    return a >= 100 ? v.toFixed(0) : a >= 10 ? v.toFixed(1) : v.toFixed(2);
  }
  function show(lines, ev) {
    tip.textContent = "";
    lines.forEach(function (l, i) {
      var d = document.createElement("div");
      if (i === 0) d.className = "h";
      d.textContent = l;
      tip.appendChild(d);
    });
    tip.hidden = false;
    var x = ev.clientX + 14, y = ev.clientY + 14;
    var w = tip.offsetWidth, h = tip.offsetHeight;
    if (x + w > window.innerWidth) x = ev.clientX - w - 8;
    if (y + h > window.innerHeight) y = ev.clientY - h - 8;
    tip.style.left = x + "px";
    tip.style.top = y + "px";
  }
  function hide() { tip.hidden = true; }
  function svgPoint(svg, ev) {
    var m = svg.getScreenCTM();
    if (!m) return null;
    var p = svg.createSVGPoint();
    p.x = ev.clientX; p.y = ev.clientY;
    return { p: p.matrixTransform(m.inverse()), scale: m.a || 1 };
  }

  function columns(svg, d, ev) {
    var q = svgPoint(svg, ev);
    if (!q) return hide();
    // The axis ends at the capture's end (t1); the column the capture ends in measured
    // only up to that end (e), at least a quarter column, as the page drew it.
    // A zoomed chart's axis starts at its window's start (t0).
    var t0 = d.t0 || 0, t1 = d.t1 || d.w * d.n;
    var i = Math.floor((q.p.x - d.x0) / (d.x1 - d.x0) * (t1 - t0) / d.w);
    if (i < 0 || i >= d.n) return hide();
    var a = t0 + i * d.w, b = Math.min(a + d.w, t1);
    var span = a < d.e && d.e < a + d.w ? Math.max(d.e - a, d.w / 4) : d.w;
    var lines = ["t " + fmt(a) + "–" + fmt(b) + " s"];
    var total = 0, rate = d.rate !== false;
    d.s.forEach(function (s) {
      if (!playerShown(s.pl)) return;
      var v = s.v[i] || 0;
      total += v;
      if (v) lines.push(s.n + ": " + (rate ? fmt(v / span) + " " + d.unit + " (" + v + ")" : fmt(v) + " " + d.unit));
    });
    if (rate && d.s.length > 1) lines.push("total: " + fmt(total / span) + " " + d.unit);
    show(lines, ev);
  }

  function nearest(svg, d, ev) {
    var q = svgPoint(svg, ev);
    if (!q) return hide();
    var best = null, bd = (12 / q.scale) * (12 / q.scale);
    // A ship chart fitted to a time window: drawn x to shown x.
    var fit = svg.__fit || [1, 0];
    d.s.forEach(function (s) {
      if (!s || !playerShown(s.pl) || (d.off && d.off[s.g]) || !sessionShown(s.se, true)) return;
      for (var i = 0; i < s.p.length; i++) {
        var pt = s.p[i];
        if (!inWin(pt[2]) || (s.m && !sessionShown(pt[6], true))) continue;
        var dx = fit[0] * pt[0] + fit[1] - q.p.x, dy = pt[1] - q.p.y, dd = dx * dx + dy * dy;
        if (dd < bd) { bd = dd; best = [s, pt]; }
      }
    });
    if (!best) return hide();
    var s = best[0], pt = best[1];
    var lines = [s.n, "t = " + fmt(pt[2]) + " s"];
    (s.f || d.f || []).forEach(function (label, k) {
      if (pt[3 + k] !== null && pt[3 + k] !== undefined) lines.push(label + " = " + fmt(pt[3 + k]));
    });
    show(lines, ev);
  }

  function zoomable(svg, m) {
    var vb0 = svg.getAttribute("viewBox").split(/\s+/).map(Number);
    var vb = vb0.slice();
    var drag = null;
    m.vb0 = vb0;
    m.vb = vb;
    // The view box is set, and the map drawn, once per animation frame.
    function apply() { m.vb = vb; drawMap(m, true); }
    svg.addEventListener("wheel", function (ev) {
      ev.preventDefault();
      // Where the pointer is in the view box as it stands (several wheel events may
      // come before the next frame sets it on the SVG).
      var r = svg.getBoundingClientRect();
      if (!r.width || !r.height) return;
      var px = vb[0] + (ev.clientX - r.left) / r.width * vb[2], py = vb[1] + (ev.clientY - r.top) / r.height * vb[3];
      var k = ev.deltaY < 0 ? 0.8 : 1.25;
      var w = Math.min(vb0[2] * 4, Math.max(vb0[2] / 200, vb[2] * k));
      k = w / vb[2];
      vb = [px - (px - vb[0]) * k, py - (py - vb[1]) * k, vb[2] * k, vb[3] * k];
      apply();
    }, { passive: false });
    // No text selection while dragging: it would repaint the whole page at every move.
    svg.addEventListener("mousedown", function (ev) { drag = [ev.clientX, ev.clientY, vb.slice()]; ev.preventDefault(); });
    window.addEventListener("mouseup", function () { drag = null; });
    svg.addEventListener("mousemove", function (ev) {
      if (!drag) return;
      // No read-out while panning: the nearest point is looked up when the map rests.
      ev.stopImmediatePropagation();
      hide();
      var r = svg.getBoundingClientRect();
      var sx = drag[2][2] / r.width, sy = drag[2][3] / r.height;
      vb = [drag[2][0] - (ev.clientX - drag[0]) * sx, drag[2][1] - (ev.clientY - drag[1]) * sy, vb[2], vb[3]];
      apply();
    });
    svg.addEventListener("dblclick", function () { vb = (m.home || vb0).slice(); apply(); });
    m.setView = function (v) { vb = v.slice(); m.home = v.slice(); apply(); };
  }
  // The map shows the chosen session: the view fits that session's points.
  function fitSession(m) {
    var se = mapSession(), b = [Infinity, Infinity, -Infinity, -Infinity];
    if (!m.setView) return;
    m.d.s.forEach(function (s) {
      if (!s) return;
      s.p.forEach(function (p) {
        if (se && String(s.m ? p[6] : s.se) !== se) return;
        b = [Math.min(b[0], p[0]), Math.min(b[1], p[1]), Math.max(b[2], p[0]), Math.max(b[3], p[1])];
      });
    });
    var vb0 = m.vb0;
    if (!se || !(b[2] >= b[0])) return m.setView(vb0);
    var pad = Math.max(b[2] - b[0], b[3] - b[1]) * 0.08 + 20, w = b[2] - b[0] + 2 * pad, h = b[3] - b[1] + 2 * pad;
    var aspect = vb0[2] / vb0[3];
    if (w / h < aspect) w = h * aspect; else h = w / aspect;
    if (w > vb0[2]) { h *= vb0[2] / w; w = vb0[2]; }
    m.setView([(b[0] + b[2] - w) / 2, (b[1] + b[3] - h) / 2, w, h]);
  }

  // ---- The map: tracks and marks of the window and the shown players; axes in
  // world units that follow zoom, text and marks a constant size on screen.
  function el(name, attrs, parent) {
    var e = document.createElementNS(NS, name);
    for (var k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function niceStep(range, n) {
    var raw = range / n, p = Math.pow(10, Math.floor(Math.log(raw) / Math.LN10)), r = raw / p;
    return (r < 1.5 ? 1 : r < 3.5 ? 2 : r < 7.5 ? 5 : 10) * p;
  }
  // A tick's text with the decimals its step needs, at most `most` (6 by default).
  function tickText(v, step, most) {
    var dec = Math.max(0, -Math.floor(Math.log(step) / Math.LN10 + 1e-9));
    return (Math.abs(v) < step / 2 ? 0 : v).toFixed(Math.min(dec, most === undefined ? 6 : most));
  }
  function drawAxes(m) {
    var f = m.d.frame, vb = m.vb, k = vb[2] / m.vb0[2];
    if (!f) return;
    var g = m.svg.querySelector("g.axes");
    if (!g) return;
    while (g.firstChild) g.removeChild(g.firstChild);
    var wx = function (px) { return f[4] + (px - f[0]) / f[2] * (f[5] - f[4]); };
    var wy = function (py) { return f[6] + (f[1] + f[3] - py) / f[3] * (f[7] - f[6]); };
    var sx = function (x) { return f[0] + (x - f[4]) / (f[5] - f[4]) * f[2]; };
    var sy = function (y) { return f[1] + f[3] - (y - f[6]) / (f[7] - f[6]) * f[3]; };
    var x0 = wx(vb[0]), x1 = wx(vb[0] + vb[2]), y0 = wy(vb[1] + vb[3]), y1 = wy(vb[1]);
    var fs = 11 * k;
    var step = niceStep(x1 - x0, 8);
    for (var x = Math.ceil(x0 / step) * step; x <= x1; x += step) {
      el("line", { x1: sx(x), x2: sx(x), y1: vb[1], y2: vb[1] + vb[3] }, g);
      el("text", { x: sx(x), y: vb[1] + vb[3] - 4 * k, "text-anchor": "middle", style: "font-size:" + fs + "px" }, g).textContent = tickText(x, step);
    }
    step = niceStep(y1 - y0, 6);
    for (var y = Math.ceil(y0 / step) * step; y <= y1; y += step) {
      el("line", { x1: vb[0], x2: vb[0] + vb[2], y1: sy(y), y2: sy(y) }, g);
      el("text", { x: vb[0] + 4 * k, y: sy(y) - 3 * k, style: "font-size:" + fs + "px" }, g).textContent = tickText(y, step);
    }
  }
  // The tracks and marks are drawn on a canvas (map_canvas.js), at the next frame.
  function drawMap(m, zoomed) { m.canvas.request(zoomed); }

  // ---- One time window for the page: shade outside it on every time chart, hide lives
  // and rows outside it, redraw the maps.
  function timeOf(svg) {
    var a = svg.getAttribute("data-time").split(" ").map(Number);
    // A chart fitted to the time window shows those seconds across the same pixels.
    var v = svg.getAttribute("data-view");
    if (v) { v = v.split(" ").map(Number); a[2] = v[0]; a[3] = v[1]; }
    return { px0: a[0], px1: a[1], t0: a[2], t1: a[3], top: a[4], bottom: a[5] };
  }
  function tToPx(m, t) { return m.px0 + (t - m.t0) / (m.t1 - m.t0) * (m.px1 - m.px0); }
  function pxToT(m, x) { return m.t0 + (x - m.px0) / (m.px1 - m.px0) * (m.t1 - m.t0); }
  function shade(svg) {
    var m = timeOf(svg), g = svg.querySelector("g.win");
    if (!g) g = el("g", { "class": "win" }, svg);
    while (g.firstChild) g.removeChild(g.firstChild);
    if (!state.win) return;
    var a = Math.max(m.px0, Math.min(m.px1, tToPx(m, state.win[0])));
    var b = Math.max(m.px0, Math.min(m.px1, tToPx(m, state.win[1])));
    [[m.px0, a], [b, m.px1]].forEach(function (r) {
      if (r[1] - r[0] > 0.5) el("rect", { "class": "win-shade", x: r[0], y: m.top, width: r[1] - r[0], height: m.bottom - m.top }, g);
    });
  }
  function fmtS(t) { return t.toFixed(t < 100 ? 1 : 0); }
  function update() {
    Array.prototype.forEach.call(document.querySelectorAll("svg[data-time]"), shade);
    Array.prototype.forEach.call(document.querySelectorAll("[data-born]"), function (e) {
      if (e.tagName.toLowerCase() === "svg") return;
      var off = !!state.win && (+e.getAttribute("data-end") < state.win[0] || +e.getAttribute("data-born") > state.win[1]);
      e.classList.toggle("win-off", off);
    });
    Array.prototype.forEach.call(document.querySelectorAll("[data-player]"), function (e) {
      e.classList.toggle("pl-off", !playerShown(e.getAttribute("data-player")));
    });
    Array.prototype.forEach.call(document.querySelectorAll("[data-session]"), function (e) {
      var onMap = !!e.closest("svg.map, .map-legend, .map-note");
      e.classList.toggle("se-off", !sessionShown(e.getAttribute("data-session"), onMap));
    });
    maps.forEach(function (m) {
      if (m.se !== mapSession()) { m.se = mapSession(); fitSession(m); }
      drawMap(m, false);
    });
    var w = document.getElementById("window"), reset = document.getElementById("window-reset");
    if (w) w.textContent = state.win ? "Time: " + fmtS(state.win[0]) + "–" + fmtS(state.win[1]) + " s" : "Time: whole capture";
    if (reset) reset.hidden = !state.win;
    Array.prototype.forEach.call(document.querySelectorAll(".slider"), function (sl) {
      var r = sl.querySelectorAll("input[type=range]"), max = +r[1].max;
      r[0].value = state.win ? state.win[0] : 0;
      r[1].value = state.win ? state.win[1] : max;
      sl.querySelector(".win-text").textContent = state.win ? fmtS(state.win[0]) + "–" + fmtS(state.win[1]) + " s" : "whole capture, 0–" + fmtS(max) + " s";
    });
    document.body.dataset.window = state.win ? state.win.join(" ") : "";
    document.body.dataset.chosenPlayer = state.player;
    document.body.dataset.chosenSession = state.session;
    document.body.dataset.mapSession = mapSession();
    document.dispatchEvent(new CustomEvent("bcw-view", { detail: { win: state.win } }));
    document.dispatchEvent(new Event("bcw-update"));
  }
  function setWindow(a, b) {
    state.win = a === null ? null : [Math.min(a, b), Math.max(a, b)];
    update();
  }
  function brushable(svg) {
    var m = timeOf(svg), start = null, rect = null;
    svg.addEventListener("mousedown", function (ev) {
      var q = svgPoint(svg, ev);
      if (!q) return;
      m = timeOf(svg); // a zoomed chart's axis is its window
      start = q.p.x;
      ev.preventDefault();
    });
    window.addEventListener("mousemove", function (ev) {
      if (start === null) return;
      m = timeOf(svg);
      var q = svgPoint(svg, ev);
      if (!q) return;
      if (!rect) rect = el("rect", { "class": "brush", y: m.top, height: m.bottom - m.top }, svg);
      rect.setAttribute("x", Math.min(start, q.p.x));
      rect.setAttribute("width", Math.abs(q.p.x - start));
    });
    window.addEventListener("mouseup", function (ev) {
      if (start === null) return;
      var q = svgPoint(svg, ev), a = start;
      start = null;
      if (rect) { rect.parentNode.removeChild(rect); rect = null; }
      if (!q || Math.abs(q.p.x - a) < 4) return;
      m = timeOf(svg);
      var t0 = Math.max(m.t0, pxToT(m, Math.min(a, q.p.x))), t1 = Math.min(m.t1, pxToT(m, Math.max(a, q.p.x)));
      if (t1 > t0) setWindow(t0, t1);
    });
    svg.addEventListener("dblclick", function () { setWindow(null); });
  }

  Array.prototype.forEach.call(document.querySelectorAll("svg[data-chart]"), function (svg) {
    var d = data[svg.getAttribute("data-chart")];
    if (svg.hasAttribute("data-zoom") && d) {
      var m = { svg: svg, d: d };
      maps.push(m);
      m.canvas = window.bcwMapCanvas(svg, d, {
        inWin: inWin,
        playerShown: playerShown,
        sessionShown: function (se) { return sessionShown(se, true); },
        off: function (g) { return !!(d.off && d.off[g]); },
        view: function () { return [m.vb, m.vb0]; },
        frame: function (zoomed) { svg.setAttribute("viewBox", m.vb.join(" ")); if (zoomed) drawAxes(m); }
      });
      zoomable(svg, m);
    }
    if (svg.hasAttribute("data-time")) brushable(svg);
    if (!d) return;
    svg.addEventListener("mousemove", function (ev) {
      if (d.k === "cols") columns(svg, d, ev); else nearest(svg, d, ev);
    });
    svg.addEventListener("mouseleave", hide);
  });
  // Legend toggles: a player's lives on one map.
  Array.prototype.forEach.call(document.querySelectorAll(".map-legend"), function (lg) {
    var m = maps.filter(function (x) { return x.svg.getAttribute("data-chart") === lg.getAttribute("data-map"); })[0];
    if (!m) return;
    m.d.off = {};
    lg.addEventListener("change", function (ev) {
      var g = ev.target.getAttribute && ev.target.getAttribute("data-toggle-group");
      if (g === null || g === undefined) return;
      m.d.off[g] = !ev.target.checked;
      drawMap(m, false);
    });
  });
  Array.prototype.forEach.call(document.querySelectorAll(".slider"), function (sl) {
    var r = sl.querySelectorAll("input[type=range]");
    function moved() {
      var a = +r[0].value, b = +r[1].value, max = +r[1].max;
      if (a <= 0 && b >= max) setWindow(null); else setWindow(a, b);
    }
    r[0].addEventListener("input", moved);
    r[1].addEventListener("input", moved);
  });
  // Sortable tables: a click on a column title sorts by the cells' data-v (numbers),
  // else their text; a second click reverses.
  Array.prototype.forEach.call(document.querySelectorAll("table.sortable"), function (tb) {
    var head = tb.querySelector("tr");
    Array.prototype.forEach.call(head.children, function (th, col) {
      th.classList.add("sort");
      th.addEventListener("click", function () {
        var down = th.getAttribute("data-order") !== "desc";
        Array.prototype.forEach.call(head.children, function (o) { o.removeAttribute("data-order"); });
        th.setAttribute("data-order", down ? "desc" : "asc");
        var rows = Array.prototype.slice.call(tb.querySelectorAll("tr")).slice(1);
        function key(r) {
          var c = r.children[col], v = c && c.getAttribute("data-v");
          return v !== null && v !== "" && !isNaN(+v) ? +v : (c ? c.textContent : "");
        }
        rows.sort(function (a, b) {
          var x = key(a), y = key(b), d;
          if (typeof x === "number" && typeof y === "number") d = x - y;
          else if (typeof x === "number") d = 1;
          else if (typeof y === "number") d = -1;
          else d = String(x).localeCompare(String(y));
          return down ? -d : d;
        });
        var parent = rows.length ? rows[0].parentNode : null;
        rows.forEach(function (r) { parent.appendChild(r); });
      });
    });
  });
  // A kill's link: the time window around it, and the map.
  document.addEventListener("click", function (ev) {
    var a = ev.target && ev.target.closest && ev.target.closest("a.kill-link");
    if (!a) return;
    setWindow(+a.getAttribute("data-t0"), +a.getAttribute("data-t1"));
  });
  var sel = document.getElementById("player");
  if (sel) sel.addEventListener("change", function () { state.player = sel.value; update(); });
  if (sessionSel) sessionSel.addEventListener("change", function () { state.session = sessionSel.value; update(); });
  var reset = document.getElementById("window-reset");
  if (reset) reset.addEventListener("click", function () { setWindow(null); });
  // For the zoom's script (rebin.js): the data, the state, the window and the read-out.
  window.__bcw = { data: data, state: state, setWindow: setWindow, show: show, hide: hide, el: el, niceStep: niceStep, tickText: tickText };
  update();

  document.addEventListener("mouseover", function (ev) {
    var t = ev.target;
    if (t && t.getAttribute && t.hasAttribute("data-tip")) show(t.getAttribute("data-tip").split("\n"), ev);
    else if (t && t.closest && !t.closest("svg[data-chart]")) hide();
  });
})();
