// bcwire report: the map's tracks and marks on a canvas laid over the map's SVG. The
// SVG keeps the frame, the axes and the titles and takes every mouse event; the
// canvas draws the points, one redraw per animation frame however many wheel or drag
// events came in it. Thousands of points in SVG cost a restyle of every point on each
// zoom step; on a canvas a frame is a few milliseconds.
//
// What was drawn last is written on the canvas for anyone to read: data-drawn-lives
// (the lives' indices), data-drawn-points, data-drawn-marks and data-view (the world
// extent shown: x from, x to, y from, y to).
(function () {
  "use strict";
  // look: { inWin(t), playerShown(player), sessionShown(session), off(group), view() -> [viewBox now,
  // viewBox at first], frame(zoomed): called in the frame before drawing }.
  window.bcwMapCanvas = function (svg, d, look) {
    var wrap = document.createElement("div");
    wrap.className = "map-wrap";
    wrap.style.position = "relative";
    svg.parentNode.insertBefore(wrap, svg);
    wrap.appendChild(svg);
    var cv = document.createElement("canvas");
    cv.className = "map-canvas";
    cv.setAttribute("aria-hidden", "true");
    // Over the SVG, as large, letting every mouse event through to it.
    cv.style.cssText = "position:absolute;left:0;top:0;pointer-events:none";
    wrap.appendChild(cv);
    // The SVG's own tracks and marks are for pages read without a script; the canvas
    // draws them from now on.
    Array.prototype.forEach.call(svg.querySelectorAll("g[data-k], path[data-marks]"), function (e) {
      e.parentNode.removeChild(e);
    });
    // Not synchronised with the page's other drawing: without it, a software-composited
    // browser spends some 20 ms a frame handing the canvas over.
    var ctx = cv.getContext("2d", { desynchronized: true });
    var dashed = svg.classList.contains("relative");
    // Lives in the legend's order (as the SVG drew them), marks last.
    var lives = [], marks = [];
    d.s.forEach(function (s, k) {
      if (!s) return;
      if (s.m) marks.push(s); else lives.push(k);
    });
    lives.sort(function (a, b) { return (d.s[a].g - d.s[b].g) || (a - b); });
    var size = null, pending = false, axesDue = false;

    function measure() {
      var r = svg.getBoundingClientRect();
      size = [r.width, r.height];
    }
    function draw() {
      if (!size) measure();
      var w = size[0], h = size[1], dpr = window.devicePixelRatio || 1;
      var bw = Math.max(1, Math.round(w * dpr)), bh = Math.max(1, Math.round(h * dpr));
      if (cv.width !== bw || cv.height !== bh) {
        cv.width = bw;
        cv.height = bh;
        cv.style.width = w + "px";
        cv.style.height = h + "px";
      }
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      ctx.clearRect(0, 0, bw, bh);
      ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
      var v = look.view(), vb = v[0], vb0 = v[1];
      var ax = w / vb[2], ay = h / vb[3], bx = -vb[0] * ax, by = -vb[1] * ay;
      // Dots and marks keep the size they have on the unzoomed map.
      var unit = w / vb0[2];
      var drawn = [], points = 0;
      ctx.lineWidth = 1.5;
      ctx.lineJoin = "round";
      ctx.setLineDash(dashed ? [5, 3] : []);
      lives.forEach(function (k) {
        var s = d.s[k];
        if (look.off(s.g) || !look.playerShown(s.pl) || !look.sessionShown(s.se)) return;
        var last = null, n = 0;
        ctx.beginPath();
        for (var i = 0; i < s.p.length; i++) {
          var p = s.p[i];
          if (!look.inWin(p[2])) continue;
          var x = p[0] * ax + bx, y = p[1] * ay + by;
          if (n === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
          last = [x, y];
          n++;
        }
        if (!n) return;
        ctx.strokeStyle = s.c;
        ctx.stroke();
        ctx.fillStyle = s.c;
        ctx.beginPath();
        ctx.arc(last[0], last[1], 3 * unit, 0, 2 * Math.PI);
        ctx.fill();
        drawn.push(k);
        points += n;
      });
      ctx.setLineDash([]);
      var shown = 0, ring = new Path2D(), cross = new Path2D(), r = 3 * unit, c = 4 * unit;
      marks.forEach(function (s) {
        s.p.forEach(function (p) {
          if (!look.inWin(p[2]) || !look.sessionShown(p[6])) return;
          var x = p[0] * ax + bx, y = p[1] * ay + by;
          if (p[3] === "explosion") {
            ring.moveTo(x + r, y);
            ring.arc(x, y, r, 0, 2 * Math.PI);
          } else {
            cross.moveTo(x - c, y - c);
            cross.lineTo(x + c, y + c);
            cross.moveTo(x + c, y - c);
            cross.lineTo(x - c, y + c);
          }
          shown++;
        });
      });
      ctx.lineWidth = 1.2;
      ctx.strokeStyle = "#e09a00";
      ctx.stroke(ring);
      ctx.lineWidth = 1.6;
      ctx.strokeStyle = "#d62728";
      ctx.stroke(cross);
      var f = d.frame;
      cv.setAttribute("data-drawn-lives", drawn.join(" "));
      cv.setAttribute("data-drawn-points", points);
      cv.setAttribute("data-drawn-marks", shown);
      if (f) {
        var wx = function (px) { return f[4] + (px - f[0]) / f[2] * (f[5] - f[4]); };
        var wy = function (py) { return f[6] + (f[1] + f[3] - py) / f[3] * (f[7] - f[6]); };
        cv.setAttribute("data-view", [wx(vb[0]), wx(vb[0] + vb[2]), wy(vb[1] + vb[3]), wy(vb[1])].map(function (x) { return +x.toFixed(3); }).join(" "));
      }
    }
    function frame() {
      if (!pending) return;
      pending = false;
      var z = axesDue;
      axesDue = false;
      look.frame(z);
      draw();
    }
    if (window.ResizeObserver) {
      new ResizeObserver(function () { size = null; request(false); }).observe(svg);
    }
    function request(zoomed) {
      axesDue = axesDue || zoomed;
      if (pending) return;
      pending = true;
      requestAnimationFrame(frame);
    }
    // Draws what is due now rather than at the next frame (for readers of the page's
    // state that cannot wait for one).
    cv.bcwFlush = frame;
    return { request: request, flush: frame, canvas: cv };
  };
})();
