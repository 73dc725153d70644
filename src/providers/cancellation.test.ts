import { describe, expect, it, vi } from 'vitest';
import { Cancellation } from './cancellation.js';

describe('Cancellation', () => {
  it('aborts once, keeping the first reason and telling each listener once', () => {
    const cancellation = new Cancellation();
    const listener = vi.fn();
    cancellation.onAbort(listener);
    cancellation.abort('first');
    cancellation.abort('second');
    expect(cancellation.aborted).toBe(true);
    expect(cancellation.reason).toBe('first');
    expect(listener).toHaveBeenCalledTimes(1);
  });

  it('does not call a listener that was removed', () => {
    const cancellation = new Cancellation();
    const kept = vi.fn();
    const removed = vi.fn();
    cancellation.onAbort(removed);
    cancellation.onAbort(kept);
    cancellation.offAbort(removed);
    cancellation.abort(new Error('gone'));
    expect(removed).not.toHaveBeenCalled();
    expect(kept).toHaveBeenCalledTimes(1);
  });

  it('gives a signal that aborts with it, whether asked for before or after the abort', () => {
    const before = new Cancellation();
    const early = before.signal;
    const reason = new Error('client left');
    before.abort(reason);
    expect(early.aborted).toBe(true);
    expect(early.reason).toBe(reason);

    const after = new Cancellation();
    after.abort(reason);
    expect(after.signal.aborted).toBe(true);
    expect(after.signal.reason).toBe(reason);
    expect(after.signal).toBe(after.signal);
  });

  it('follows an AbortSignal until unlinked', () => {
    const controller = new AbortController();
    const cancellation = new Cancellation();
    const unlink = cancellation.follow(controller.signal, () => 'caller cancelled');
    controller.abort();
    expect(cancellation.reason).toBe('caller cancelled');

    const other = new AbortController();
    const unlinked = new Cancellation();
    unlinked.follow(other.signal, () => 'never')();
    other.abort();
    expect(unlinked.aborted).toBe(false);
    unlink();
  });

  it('follows another cancellation, and one already aborted at once', () => {
    const source = new Cancellation();
    const follower = new Cancellation();
    follower.follow(source, () => 'source aborted');
    source.abort('x');
    expect(follower.reason).toBe('source aborted');

    const done = new Cancellation();
    done.abort('already');
    const late = new Cancellation();
    late.follow(done, () => 'at once');
    expect(late.reason).toBe('at once');
  });

  it('removing a listener that was never added, or after the abort, leaves the others alone', () => {
    const cancellation = new Cancellation();
    expect(() => cancellation.offAbort(() => {})).not.toThrow();
    const first = vi.fn();
    const last = vi.fn();
    cancellation.onAbort(first);
    cancellation.onAbort(last);
    cancellation.offAbort(() => {});
    cancellation.abort('done');
    expect(first).toHaveBeenCalledTimes(1);
    expect(last).toHaveBeenCalledTimes(1);
    expect(() => cancellation.offAbort(first)).not.toThrow();
  });

  it('removes the listener at its own place, not the one added after it', () => {
    const cancellation = new Cancellation();
    const other = vi.fn();
    const removed = vi.fn();
    const last = vi.fn();
    cancellation.onAbort(other);
    cancellation.onAbort(removed);
    cancellation.onAbort(last);
    cancellation.offAbort(removed);
    cancellation.abort('done');
    expect(other).toHaveBeenCalledTimes(1);
    expect(removed).not.toHaveBeenCalled();
    expect(last).toHaveBeenCalledTimes(1);
  });

  it('stops following another cancellation once unlinked, and unlinking after its abort is harmless', () => {
    const source = new Cancellation();
    const unlinked = new Cancellation();
    unlinked.follow(source, () => 'never')();
    const follower = new Cancellation();
    const unlink = follower.follow(source, () => 'source aborted');
    source.abort('x');
    expect(unlinked.aborted).toBe(false);
    expect(follower.reason).toBe('source aborted');
    expect(() => unlink()).not.toThrow();
  });
});
