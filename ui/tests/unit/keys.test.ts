// Keyboard dispatch: newest map wins, dialogs shadow every page map (even one
// registered after the dialog opened), text fields keep their keys, g-prefix works.
import { describe, expect, it } from 'vitest';
import { dispatch, pushKeys, setGoMap, type KeyMap } from '../../src/lib/keys';

function key(k: string, target: { tagName: string } = { tagName: 'BODY' }) {
  let prevented = false;
  const e = { key: k, target, ctrlKey: false, metaKey: false, altKey: false, isComposing: false, preventDefault: () => (prevented = true) };
  dispatch(e as unknown as KeyboardEvent);
  return prevented;
}

describe('keys', () => {
  it('routes keys through the stack of maps', () => {
    const log: string[] = [];
    const m = (name: string, keys: string[]): { current: KeyMap } => ({
      current: Object.fromEntries(keys.map((k) => [k, () => log.push(`${name}:${k}`)])),
    });
    const offApp = pushKeys(m('app', ['?']));
    const offList = pushKeys(m('list', ['j', 'Enter']));
    expect(key('j')).toBe(true);
    expect(key('x')).toBe(false);
    expect(key('j', { tagName: 'INPUT' })).toBe(false);

    const offModal = pushKeys(m('modal', ['Escape']), true);
    const offDialog = pushKeys(m('dialog', ['Enter']), true);
    const offLate = pushKeys(m('late-page', ['Escape', 'j']));
    key('j');
    key('Escape', { tagName: 'INPUT' });
    key('Enter');
    key('?');
    offDialog();
    offModal();
    offLate();
    key('Enter');

    const went: string[] = [];
    setGoMap({ s: () => went.push('servers') });
    key('g');
    key('s');
    offList();
    offApp();
    expect(log).toEqual(['list:j', 'modal:Escape', 'dialog:Enter', 'list:Enter']);
    expect(went).toEqual(['servers']);
  });
});
