// Copy buttons, the portal's only script: pages work without it (buttons stay hidden).
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

  // Sorting applies as soon as it is chosen (without JS, the form's button does it).
  for (const select of document.querySelectorAll("select[data-autosubmit]")) {
    select.addEventListener("change", () => select.form && select.form.requestSubmit());
  }
})();
