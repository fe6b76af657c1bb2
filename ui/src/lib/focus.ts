// Where focus goes when the route changes (issue 46): to the new page's main
// heading, so a keyboard or screen-reader user starts on the page and hears
// its name, without the window jumping.

/** Focus `main`'s first h1 (made focusable), else `main` itself; never scrolls. */
export function focusPage(main: HTMLElement | null, wait = (f: () => void) => requestAnimationFrame(() => f())): void {
  if (!main) return;
  wait(() => {
    // A dialog opened on arrival (an intent from a notification) keeps its focus.
    if (document.querySelector('[role=dialog]')) return;
    const h = main.querySelector<HTMLElement>('h1');
    const target = h ?? main;
    if (h && !h.hasAttribute('tabindex')) h.setAttribute('tabindex', '-1');
    target.focus({ preventScroll: true });
  });
}
