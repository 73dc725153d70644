import { describe, expect, it, vi } from 'vitest';
import { HIGH_WATER_BYTES, ResponseBody } from './response-body.js';

function attached() {
  const body = new ResponseBody();
  const abort = vi.fn<(reason: Error) => void>();
  const resume = vi.fn<() => void>();
  const settled = vi.fn<() => void>();
  body.attach(abort, resume, settled);
  return { body, abort, resume, settled };
}

const bytes = (text: string) => Buffer.from(text, 'utf8');

describe('ResponseBody', () => {
  it('hands a waiting reader every chunk pushed in the same tick as one buffer', async () => {
    const { body } = attached();
    const read = body.read();
    body.push(bytes('event: a\n'));
    body.push(bytes('data: 1\n\n'));
    body.push(bytes('event: b\n'));
    expect((await read)?.toString()).toBe('event: a\ndata: 1\n\nevent: b\n');
  });

  it('delivers chunks queued before a read, then null once the body ended', async () => {
    const { body, settled } = attached();
    body.push(bytes('one '));
    body.push(bytes('two'));
    expect(body.settled).toBe(false);
    body.end();
    expect(body.settled).toBe(true);
    expect(settled).toHaveBeenCalledTimes(1);
    expect((await body.read())?.toString()).toBe('one two');
    expect(await body.read()).toBeNull();
    expect(await body.read()).toBeNull();
  });

  it('delivers the last chunks before the end to a reader that was waiting', async () => {
    const { body } = attached();
    const first = body.read();
    body.push(bytes('tail'));
    body.end();
    expect((await first)?.toString()).toBe('tail');
    expect(await body.read()).toBeNull();
  });

  it('ends a waiting reader with null when the body ends with nothing queued', async () => {
    const { body } = attached();
    const read = body.read();
    body.end();
    expect(await read).toBeNull();
  });

  it('rejects a waiting reader, and every later read, with the error the body failed with', async () => {
    const { body, settled } = attached();
    const read = body.read();
    const failure = new Error('socket hang up');
    body.fail(failure);
    await expect(read).rejects.toBe(failure);
    await expect(body.read()).rejects.toBe(failure);
    expect(settled).toHaveBeenCalledTimes(1);
  });

  it('drops chunks queued before a failure', async () => {
    const { body } = attached();
    body.push(bytes('partial'));
    body.fail(new Error('reset'));
    await expect(body.read()).rejects.toThrow('reset');
  });

  it('refuses a second read while one is waiting', async () => {
    const { body } = attached();
    const first = body.read();
    await expect(body.read()).rejects.toThrow('one chunk at a time');
    body.end();
    expect(await first).toBeNull();
  });

  it('asks the producer to pause above the high-water mark and resumes it once the reader took the bytes', async () => {
    const { body, resume } = attached();
    expect(body.push(Buffer.alloc(HIGH_WATER_BYTES))).toBe(true);
    expect(body.push(Buffer.alloc(1))).toBe(false);
    expect(resume).not.toHaveBeenCalled();
    const chunk = await body.read();
    expect(chunk?.length).toBe(HIGH_WATER_BYTES + 1);
    expect(resume).toHaveBeenCalledTimes(1);
  });

  it('aborts the request when destroyed while the body is still arriving, rejecting a waiting read with the reason', async () => {
    const { body, abort } = attached();
    const read = body.read();
    const reason = new Error('idle deadline');
    body.destroy(reason);
    await expect(read).rejects.toBe(reason);
    expect(abort).toHaveBeenCalledWith(reason);
    expect(body.destroyed).toBe(true);
    expect(body.settled).toBe(true);
  });

  it('aborts with a shared reason when destroyed without one', () => {
    const { body, abort } = attached();
    body.destroy();
    body.destroy();
    expect(abort).toHaveBeenCalledTimes(1);
    expect(abort.mock.calls[0]![0]).toBeInstanceOf(Error);
  });

  it('does not abort a body that was received in full when it is destroyed', async () => {
    const { body, abort } = attached();
    body.push(bytes('done'));
    body.end();
    body.destroy();
    expect(abort).not.toHaveBeenCalled();
    expect(body.destroyed).toBe(true);
    // What was queued is let go: the reader is done with it.
    expect(await body.read()).toBeNull();
  });

  it('ignores chunks pushed after the end or after being destroyed', async () => {
    const { body } = attached();
    body.destroy();
    expect(body.push(bytes('late'))).toBe(true);
    await expect(body.read()).rejects.toThrow();
  });

  it('refuses a second read while one is waiting, even when chunks have arrived for the first', async () => {
    const { body } = attached();
    const first = body.read();
    body.push(bytes('for the first read'));
    await expect(body.read()).rejects.toThrow('a response body is read one chunk at a time');
    expect((await first)?.toString()).toBe('for the first read');
  });

  it('wakes a waiting reader again for each later chunk', async () => {
    const { body } = attached();
    const first = body.read();
    body.push(bytes('one'));
    expect((await first)?.toString()).toBe('one');
    const second = body.read();
    body.push(bytes('two'));
    expect((await second)?.toString()).toBe('two');
    const third = body.read();
    body.end();
    expect(await third).toBeNull();
  });

  it('ignores chunks pushed after the end, still ending with what came before', async () => {
    const { body } = attached();
    body.push(bytes('whole'));
    body.end();
    expect(body.push(bytes('late'))).toBe(true);
    expect((await body.read())?.toString()).toBe('whole');
    expect(await body.read()).toBeNull();
  });

  it('keeps the first outcome: a failure after the end and an end after a failure change nothing', async () => {
    const ended = attached();
    ended.body.push(bytes('complete'));
    ended.body.end();
    ended.body.fail(new Error('too late'));
    expect((await ended.body.read())?.toString()).toBe('complete');
    expect(await ended.body.read()).toBeNull();
    expect(ended.settled).toHaveBeenCalledTimes(1);

    const failed = attached();
    const failure = new Error('reset');
    failed.body.fail(failure);
    failed.body.end();
    failed.body.fail(new Error('again'));
    await expect(failed.body.read()).rejects.toBe(failure);
    expect(failed.settled).toHaveBeenCalledTimes(1);
  });

  it('fails with an Error made from a failure that is not one', async () => {
    const { body } = attached();
    body.fail('socket closed');
    const failure: unknown = await body.read().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toBe('socket closed');
  });

  it('resumes the producer only when it was paused, and pauses it again only above the mark', async () => {
    const { body, resume } = attached();
    expect(body.push(bytes('small'))).toBe(true);
    expect((await body.read())?.toString()).toBe('small');
    expect(resume).not.toHaveBeenCalled();

    expect(body.push(Buffer.alloc(HIGH_WATER_BYTES + 1))).toBe(false);
    expect((await body.read())?.length).toBe(HIGH_WATER_BYTES + 1);
    expect(resume).toHaveBeenCalledTimes(1);
    expect(body.push(bytes('after the pause'))).toBe(true);
    expect((await body.read())?.toString()).toBe('after the pause');
    expect(resume).toHaveBeenCalledTimes(1);
  });

  it('works without a producer attached: paused, read, ended and destroyed without calling one', async () => {
    const read = new ResponseBody();
    expect(read.push(Buffer.alloc(HIGH_WATER_BYTES + 1))).toBe(false);
    expect((await read.read())?.length).toBe(HIGH_WATER_BYTES + 1);
    read.end();
    expect(await read.read()).toBeNull();

    const left = new ResponseBody();
    const pending = left.read();
    left.destroy();
    await expect(pending).rejects.toThrow('the response body is no longer read');
    expect(left.settled).toBe(true);
  });

  it('destroyed with a reason that is not an Error, rejects the read with it but aborts the request with an Error', async () => {
    const { body, abort } = attached();
    const pending = body.read();
    body.destroy('deadline');
    const failure: unknown = await pending.catch((error: unknown) => error);
    expect((failure as Error).message).toBe('deadline');
    expect(abort).toHaveBeenCalledTimes(1);
    expect(abort.mock.calls[0]![0]).toBeInstanceOf(Error);
    expect(abort.mock.calls[0]![0].message).toBe('the response body is no longer read');
  });

  it('of() delivers one read per given chunk, however small, then null', async () => {
    const body = ResponseBody.of([bytes('a'), bytes('é').subarray(0, 1), bytes('é').subarray(1)]);
    const reads: (string | null)[] = [];
    for (;;) {
      const chunk = await body.read();
      reads.push(chunk === null ? null : chunk.toString('hex'));
      if (chunk === null) break;
    }
    expect(reads).toEqual(['61', 'c3', 'a9', null]);
  });
});
