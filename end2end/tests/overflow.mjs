// What sticks out of the screen: shared by the suites that hold every page
// to the viewport's width (phones.test.mjs, tax.test.mjs).

/** How wide the page is, and what sticks out past the screen's right edge. */
export async function width(p) {
  return p.evaluate(() => {
    const limit = document.documentElement.clientWidth;
    const offenders = [...document.querySelectorAll('body *')]
      .filter((el) => {
        const box = el.getBoundingClientRect();
        if (box.width === 0 || box.right <= limit + 1) return false;
        // Inside a box that scrolls sideways is fine: the box is the screen's width.
        for (let a = el.parentElement; a; a = a.parentElement) {
          if (['auto', 'scroll', 'hidden'].includes(getComputedStyle(a).overflowX)) return false;
        }
        return true;
      })
      .slice(0, 5)
      .map((el) => `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}.${el.className} (${Math.round(el.getBoundingClientRect().right)}px)`);
    return { scrollWidth: document.documentElement.scrollWidth, offenders };
  });
}
