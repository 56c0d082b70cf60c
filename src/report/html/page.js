// bcwire report: hover read-outs and map zoom. Plain JS, no network, no markup from data:
// every text from the capture is written with textContent.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("bcw-data").textContent);
  var tip = document.getElementById("tip");

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
    var i = Math.floor((q.p.x - d.x0) / (d.x1 - d.x0) * d.n);
    if (i < 0 || i >= d.n) return hide();
    var lines = ["t " + fmt(i * d.w) + "–" + fmt((i + 1) * d.w) + " s"];
    var total = 0, rate = d.rate !== false;
    d.s.forEach(function (s) {
      var v = s.v[i] || 0;
      total += v;
      if (v) lines.push(s.n + ": " + (rate ? fmt(v / d.w) + " " + d.unit + " (" + v + ")" : fmt(v) + " " + d.unit));
    });
    if (rate && d.s.length > 1) lines.push("total: " + fmt(total / d.w) + " " + d.unit);
    show(lines, ev);
  }

  function nearest(svg, d, ev) {
    var q = svgPoint(svg, ev);
    if (!q) return hide();
    var best = null, bd = (12 / q.scale) * (12 / q.scale);
    d.s.forEach(function (s) {
      for (var i = 0; i < s.p.length; i++) {
        var pt = s.p[i], dx = pt[0] - q.p.x, dy = pt[1] - q.p.y, dd = dx * dx + dy * dy;
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

  function zoomable(svg) {
    var vb0 = svg.getAttribute("viewBox").split(/\s+/).map(Number);
    var vb = vb0.slice();
    var drag = null;
    function apply() { svg.setAttribute("viewBox", vb.join(" ")); }
    svg.addEventListener("wheel", function (ev) {
      ev.preventDefault();
      var q = svgPoint(svg, ev);
      if (!q) return;
      var k = ev.deltaY < 0 ? 0.8 : 1.25;
      var w = Math.min(vb0[2] * 4, Math.max(vb0[2] / 200, vb[2] * k));
      k = w / vb[2];
      vb = [q.p.x - (q.p.x - vb[0]) * k, q.p.y - (q.p.y - vb[1]) * k, vb[2] * k, vb[3] * k];
      apply();
    }, { passive: false });
    svg.addEventListener("mousedown", function (ev) { drag = [ev.clientX, ev.clientY, vb.slice()]; });
    window.addEventListener("mouseup", function () { drag = null; });
    svg.addEventListener("mousemove", function (ev) {
      if (!drag) return;
      var r = svg.getBoundingClientRect();
      var sx = drag[2][2] / r.width, sy = drag[2][3] / r.height;
      vb = [drag[2][0] - (ev.clientX - drag[0]) * sx, drag[2][1] - (ev.clientY - drag[1]) * sy, vb[2], vb[3]];
      apply();
    });
    svg.addEventListener("dblclick", function () { vb = vb0.slice(); apply(); });
  }

  Array.prototype.forEach.call(document.querySelectorAll("svg[data-chart]"), function (svg) {
    var d = data[svg.getAttribute("data-chart")];
    if (svg.hasAttribute("data-zoom")) zoomable(svg);
    if (!d) return;
    svg.addEventListener("mousemove", function (ev) {
      if (d.k === "cols") columns(svg, d, ev); else nearest(svg, d, ev);
    });
    svg.addEventListener("mouseleave", hide);
  });
  document.addEventListener("mouseover", function (ev) {
    var t = ev.target;
    if (t && t.getAttribute && t.hasAttribute("data-tip")) show(t.getAttribute("data-tip").split("\n"), ev);
    else if (t && t.closest && !t.closest("svg[data-chart]")) hide();
  });
})();
