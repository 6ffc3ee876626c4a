// The portal's only script: copy buttons, drawing the search box, sorting at once; pages work without it.
(() => {
  "use strict";
  document.documentElement.classList.add("js");

  const status = document.createElement("p");
  status.className = "visually-hidden";
  status.setAttribute("role", "status");
  document.body.append(status);

  const fallbackCopy = (text) => {
    const area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.className = "offscreen";
    document.body.append(area);
    area.select();
    const ok = document.execCommand("copy");
    area.remove();
    if (!ok) throw new Error("copy refused");
  };

  const copy = async (text) => {
    if (navigator.clipboard && window.isSecureContext) {
      try {
        await navigator.clipboard.writeText(text);
        return;
      } catch (_) { /* permission refused: try the old way */ }
    }
    fallbackCopy(text);
  };

  for (const button of document.querySelectorAll("button[data-copy-target]")) {
    const target = document.getElementById(button.dataset.copyTarget);
    if (!target) continue;
    const label = button.textContent;
    button.hidden = false;
    button.addEventListener("click", async () => {
      try {
        await copy(target.textContent);
        button.textContent = "Copied";
        button.classList.add("copied");
        status.textContent = "Copied to the clipboard";
      } catch (_) {
        const range = document.createRange();
        range.selectNodeContents(target);
        const selection = window.getSelection();
        selection.removeAllRanges();
        selection.addRange(range);
        button.textContent = "Press Ctrl+C";
        status.textContent = "Selected; press Control C to copy";
      }
      window.setTimeout(() => {
        button.textContent = label;
        button.classList.remove("copied");
      }, 1800);
    });
  }

  // Bring the current node into view inside a long hierarchy tree (without moving the page).
  const current = document.querySelector('.tree a[aria-current="page"]');
  const scroller = current && current.closest("nav");
  if (scroller && scroller.scrollHeight > scroller.clientHeight) {
    scroller.scrollTop = Math.max(0, current.offsetTop - scroller.clientHeight / 2);
  }

  // The search map: drag to draw a box, which is written into the bbox field (typing works
  // without the script). The map's viewBox is in degrees (x = longitude, y = -latitude).
  const map = document.getElementById("search-map");
  const field = map && document.getElementById(map.dataset.bboxField);
  if (map && field && map.createSVGPoint) {
    const svgNS = "http://www.w3.org/2000/svg";
    const draft = document.createElementNS(svgNS, "rect");
    draft.setAttribute("class", "map-draw");
    draft.setAttribute("visibility", "hidden");
    map.append(draft);
    const clamp = (v, low, high) => Math.min(high, Math.max(low, v));
    const round = (v) => String(Math.round(v * 100) / 100);
    const degrees = (event) => {
      const point = map.createSVGPoint();
      point.x = event.clientX;
      point.y = event.clientY;
      const p = point.matrixTransform(map.getScreenCTM().inverse());
      return [clamp(p.x, -180, 180), clamp(-p.y, -90, 90)];
    };
    const show = (west, south, east, north) => {
      draft.setAttribute("x", west);
      draft.setAttribute("y", -north);
      draft.setAttribute("width", Math.max(0, east - west));
      draft.setAttribute("height", Math.max(0, north - south));
      draft.setAttribute("visibility", "visible");
    };
    let start = null;
    let box = null;
    map.addEventListener("pointerdown", (event) => {
      if (event.button !== 0) return;
      event.preventDefault();
      start = degrees(event);
      box = null;
      map.setPointerCapture(event.pointerId);
    });
    map.addEventListener("pointermove", (event) => {
      if (!start) return;
      const [x, y] = degrees(event);
      box = [Math.min(start[0], x), Math.min(start[1], y), Math.max(start[0], x), Math.max(start[1], y)];
      show(...box);
    });
    const finish = () => {
      if (start && box && box[2] - box[0] > 0.01 && box[3] - box[1] > 0.01) {
        field.value = box.map(round).join(",");
        field.dispatchEvent(new Event("change"));
        status.textContent = `Box set to ${field.value}`;
      }
      start = null;
    };
    map.addEventListener("pointerup", finish);
    map.addEventListener("pointercancel", () => { start = null; });
    // A typed box is drawn too (across the antimeridian it is left to the server's map).
    field.addEventListener("change", () => {
      const v = field.value.split(",").map(Number);
      if (v.length === 4 && v.every(Number.isFinite) && v[0] <= v[2] && v[1] <= v[3]) show(...v);
      else draft.setAttribute("visibility", "hidden");
    });
    // The form's two dates become the one datetime parameter the API takes, so the URL
    // is the same as the links the page writes (without the script the server joins them).
    const form = field.form;
    const from = document.getElementById("start");
    const to = document.getElementById("end");
    if (form && from && to) {
      form.addEventListener("submit", () => {
        if (from.value || to.value) {
          const hidden = document.createElement("input");
          hidden.type = "hidden";
          hidden.name = "datetime";
          hidden.value = `${from.value || ".."}/${to.value || ".."}`;
          form.append(hidden);
        }
        from.removeAttribute("name");
        to.removeAttribute("name");
        if (!field.value.trim()) field.removeAttribute("name");
      });
    }
  }

  // Sorting applies as soon as it is chosen (without JS, the form's button does it).
  for (const select of document.querySelectorAll("select[data-autosubmit]")) {
    select.addEventListener("change", () => select.form && select.form.requestSubmit());
  }
})();
