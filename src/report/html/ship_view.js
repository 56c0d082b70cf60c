// bcwire report: ship charts follow the page's time window. Each chart is drawn over
// its ship's life; with a window, its lines are stretched to the part of the life
// inside the window (one transform, no redrawing of points), and its event marks and
// time ticks are written again for those seconds. Listens to the page's "bcw-view".
(function () {
  "use strict";
  // The page's data and element maker (page.js runs first): the data is parsed once.
  var data = window.__bcw.data, el = window.__bcw.el;
  // As the page draws them: lanes at y 16 (fire) and 34 (damage), ticks 12 px long.
  var FIRE = 10, DAMAGE = 28, END_GAP = 56;

  function niceStep(range, n) {
    var raw = range / n, p = Math.pow(10, Math.floor(Math.log(raw) / Math.LN10)), r = raw / p;
    return (r <= 1 ? 1 : r <= 2 ? 2 : r <= 5 ? 5 : 10) * p;
  }
  function r1(v) { return Math.round(v * 10) / 10; }

  function ticks(svg, a, v0, v1) {
    var g = svg.querySelector("g.xt");
    if (!g) return;
    while (g.firstChild) g.removeChild(g.firstChild);
    var l = a[0], r = a[1], top = a[4], bottom = a[5];
    var x = function (t) { return l + (t - v0) / (v1 - v0) * (r - l); };
    var step = niceStep(v1 - v0, 10), dec = Math.max(0, -Math.floor(Math.log(step) / Math.LN10 + 1e-9));
    for (var t = Math.ceil(v0 / step) * step; t <= v1 + step * 1e-9; t += step) {
      var px = x(t);
      el("line", { x1: r1(px), y1: top, x2: r1(px), y2: bottom }, g);
      if (px - l >= END_GAP && r - px >= END_GAP) {
        el("text", { x: r1(px), y: bottom + 14, "text-anchor": "middle" }, g).textContent = t.toFixed(Math.min(dec, 6));
      }
    }
    [[0, v0, l, "start"], [1, v1, r, "end"]].forEach(function (e) {
      el("text", { "class": "end", "data-end": e[0], x: e[2], y: bottom + 14, "text-anchor": e[3] }, g).textContent = e[1].toFixed(1);
    });
    g.setAttribute("data-from", v0);
    g.setAttribute("data-to", v1);
  }

  function marks(svg, k, b) {
    var d = data[svg.getAttribute("data-chart")], ev = null;
    (d && d.s || []).forEach(function (s) { if (s.n === "event") ev = s; });
    if (!ev) return;
    var path = { f: "", d: "", k: "" };
    ev.p.forEach(function (p) {
      var x = r1(k * p[0] + b), lane = p[6];
      if (lane === "f") path.f += "M" + x + "," + FIRE + "v12";
      else if (lane === "k") path.k += "M" + r1(x - 4) + "," + (DAMAGE + 2) + "l8,8m0,-8l-8,8";
      else path.d += "M" + x + "," + DAMAGE + "v12";
    });
    [["f", "fire"], ["d", "damage"], ["k", "kill"]].forEach(function (w) {
      var pe = svg.querySelector("path[data-marks=" + w[1] + "]");
      if (pe) pe.setAttribute("d", path[w[0]] || "M0,0");
    });
  }

  function fit(svg, win) {
    // data-time: pixels of the life's first and last second, those seconds, top, bottom.
    var a = svg.getAttribute("data-time").split(" ").map(Number);
    var v0 = a[2], v1 = a[3];
    if (win) { v0 = Math.max(v0, win[0]); v1 = Math.min(v1, win[1]); }
    var whole = !(v1 > v0) || (v0 === a[2] && v1 === a[3]);
    if (whole) { v0 = a[2]; v1 = a[3]; }
    var w = a[1] - a[0], k = (a[3] - a[2]) / (v1 - v0), b = a[0] - k * a[0] + (a[2] - v0) / (v1 - v0) * w;
    var g = svg.querySelector("g.fit");
    if (whole) {
      svg.removeAttribute("data-view");
      svg.__fit = null;
      if (g) g.removeAttribute("transform");
    } else {
      svg.setAttribute("data-view", v0 + " " + v1);
      svg.__fit = [k, b];
      if (g) g.setAttribute("transform", "matrix(" + k + ",0,0,1," + b + ",0)");
    }
    marks(svg, whole ? 1 : k, whole ? 0 : b);
    ticks(svg, a, v0, v1);
    // The chart shows only seconds inside the window: nothing to shade.
    var shade = svg.querySelector("g.win");
    if (shade) while (shade.firstChild) shade.removeChild(shade.firstChild);
  }

  var last = null;
  document.addEventListener("bcw-view", function (ev) {
    var win = ev.detail && ev.detail.win, key = win ? win.join(" ") : "";
    if (key === last) return;
    last = key;
    Array.prototype.forEach.call(document.querySelectorAll("svg.chart.ship[data-time]"), function (svg) { fit(svg, win); });
  });
})();
