/**
 * Per-key (and per-address) rate limit: a sliding window that never lets more than `limit`
 * requests through in ANY interval of `windowSeconds`, kept in ONE DynamoDB item per subject and
 * changed only by single-item conditional writes (dynalite has no transactions).
 *
 * The item (`pk <subject>#sw`, subject `key#<keyId>` or `anon#<address>`; a limit of more than 50
 * admissions a second is split over shard items `<subject>#<n>#sw`, see `hit`):
 *   s<k>      admissions counted in time slot k (slot = windowMs / SLOTS_PER_WINDOW, k = floor(ms / slot))
 *   latest    the newest slot written (slots only ever move forward)
 *   expiresAt TTL, one window after the newest slot
 *
 * A request at slot j is admitted when the admissions of slots j-SLOTS..j (a span of one window
 * plus one slot, which contains every instant of (now - window, now]) number fewer than `limit`;
 * the admission is one UpdateItem `ADD s<j> :1` whose condition re-checks, at write time, that
 * nothing it summed has changed:
 *   - `latest` is still what was read (a write to a newer slot fails it), and the count of the
 *     slot `latest` names, when that slot is in the past but inside the window, is still below
 *     `limit` - (the sum of the window's other, closed, slots);
 *   - when `latest` is j itself, only s<j> can move, and the condition is s<j> < limit - (the
 *     sum of the older slots), so concurrent requests of one slot need no retry and exactly the
 *     remaining capacity gets through.
 * Slots older than `latest` can no longer be written (a writer needs `latest` <= its slot), so
 * the sum a request was admitted on is the true count at its write: no interval of one window
 * ever holds more than `limit` admissions. It errs on the safe side by up to one slot (1/60 of
 * the window): admissions in the slot straddling the window's start still count in full.
 * One call per admission in steady state: the limiter remembers each subject's item as its last
 * write returned it (ReturnValues ALL_NEW) and builds the next conditional UpdateItem from that
 * instead of reading. The condition is what makes an admission safe, not the freshness of what it
 * was built from: a remembered item that is behind (another container wrote a newer slot, or the
 * slot it pins moved) fails the condition, and the request then reads the item (consistent
 * GetItem) and tries again. Concurrent containers admitting in the same slot do not conflict
 * (the condition bounds s<j>, it does not pin it): a container pays two extra calls (the failed
 * UpdateItem and a GetItem) at most once per slot change (1/60 of the window). A refusal is only ever decided on a fresh read.
 * A sharded subject (see `hit`) shared by several containers adds one read per visit of a shard
 * (at most SHARD_VISIT_ADMISSIONS admissions): a consistent BatchGetItem of two shards, no write,
 * after which the write is built on a fresh copy; a container alone on a subject reads nothing more.
 * Refused requests are not counted. A writer whose clock is behind `latest` counts itself in
 * `latest`'s slot (never in the past). After MAX_ATTEMPTS lost races the request is refused as
 * limited (Retry-After 1): contention never turns into extra admissions.
 *
 * Headers (unchanged in meaning): limit; remaining = how many more requests would be admitted
 * now; reset = Unix seconds at which the oldest admission counted now leaves the window (the
 * moment `remaining` next grows, so the Retry-After of a 429).
 */
import { BatchGetItemCommand, GetItemCommand, UpdateItemCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Unix epoch seconds at which the oldest admission counted now leaves the window */
  reset: number;
  /** true when this request is over the limit */
  exceeded: boolean;
}

/** Slots per window: the limiter errs on the safe side by at most one slot (1/60 of the window). */
export const SLOTS_PER_WINDOW = 60;
/** Lost write races before a request is refused as limited. */
export const MAX_ATTEMPTS = 8;
/** Admission rate one counter item is meant to take at most; a faster limit is split over shards. */
export const ADMISSIONS_PER_SHARD_PER_SECOND = 50;
/** Most shards of one subject's limit. */
export const MAX_RATE_SHARDS = 64;

/** Items one subject's limit is split over: 1 up to 50 admissions/s, then one more per 50/s (at most 64). */
export function shardsFor(limit: number, windowSeconds: number): number {
  const perSecond = limit / Math.max(1, windowSeconds);
  return Math.max(1, Math.min(MAX_RATE_SHARDS, Math.ceil(perSecond / ADMISSIONS_PER_SHARD_PER_SECOND), limit));
}

/** Admissions a container counts in one shard of a subject before it picks another (see `hit`: 16 keeps calls per request under 1.1). */
export const SHARD_VISIT_ADMISSIONS = 16;

/** Subjects whose last-seen item one limiter keeps (the oldest seen is dropped beyond it). */
export const MAX_REMEMBERED_SUBJECTS = 10_000;
const SLOT_PREFIX = 's';

interface Snapshot {
  latest: number | undefined;
  slots: Map<number, number>;
}

function snapshotOf(item: Record<string, AttributeValue> | undefined): Snapshot {
  const slots = new Map<number, number>();
  let latest: number | undefined;
  for (const [name, value] of Object.entries(item ?? {})) {
    if (name === 'latest' && value.N !== undefined) latest = Number(value.N);
    else if (name.startsWith(SLOT_PREFIX) && /^s\d+$/.test(name) && value.N !== undefined) slots.set(Number(name.slice(1)), Number(value.N));
  }
  return { latest, slots };
}

/** Admissions of slots first..last. */
function countIn(slots: Map<number, number>, first: number, last: number): number {
  let sum = 0;
  for (const [k, n] of slots) if (k >= first && k <= last) sum += n;
  return sum;
}

export class SlidingWindowRateLimiter {
  /** each subject's item as this instance last read or wrote it (at most MAX_REMEMBERED_SUBJECTS) */
  private readonly lastSeen = new Map<string, Snapshot>();
  /**
   * each sharded subject's shard now: the slot it was picked in, the admissions counted in it since,
   * and the last slot in which a write of this container found another container's writes (see `hit`)
   */
  private readonly shardInUse = new Map<string, { slot: number; shard: number; admissions: number; sharedSlot: number | undefined }>();

  constructor(
    private readonly db: DynamoDBClient,
    private readonly table: string,
    /** picks the shard of a sharded subject (tests may fix it) */
    private readonly random: () => number = Math.random,
    /** admissions a container counts in one shard before it picks another (see `hit`) */
    private readonly admissionsPerVisit: number = SHARD_VISIT_ADMISSIONS,
  ) {}

  private remember(subject: string, snapshot: Snapshot): void {
    this.lastSeen.delete(subject);
    this.lastSeen.set(subject, snapshot);
    if (this.lastSeen.size > MAX_REMEMBERED_SUBJECTS) this.lastSeen.delete(this.lastSeen.keys().next().value!);
  }

  /**
   * Counts one request of `subject` against `limit` per `windowSeconds`. A limit of more than
   * ADMISSIONS_PER_SHARD_PER_SECOND a second is split over shardsFor(...) items (each its own sliding
   * window with its share of the limit; the shares add up to `limit` exactly), so the sum of
   * admissions in any window never passes `limit`, whichever shard each admission is counted in:
   * the choice of shard below only decides where a write lands, never whether it is admitted.
   *
   * Choice of shard: a container counts a subject in one shard for a visit of at most
   * SHARD_VISIT_ADMISSIONS (16) admissions, never across a slot boundary (1/60 of the window). A
   * visit goes to the less written of two shards picked at random (the fewer admissions in the slot
   * a write would go to, then in the window; a full one last; on a tie, not the shard just left).
   * When another container wrote the subject's shards in this slot or the one before (a write of
   * this container found its slot's count other than its copy's plus one, or lost a race), the two
   * are read first (one consistent BatchGetItem, no write), so the choice is made on fresh counts
   * and the write built on a fresh copy; a container alone on a subject compares the copies it
   * remembers, which are then exact: one call per admission, no read. The first request of a
   * subject in a container reads every shard instead. The visit's other admissions build their
   * UpdateItem on the copy the last write returned (ALL_NEW: one call each). When the shard is full,
   * one other it has not seen full is tried. So one key's 1,000 requests/s from many containers
   * write its 20 shards at ~50/s each, and no container puts a whole slot's worth on one shard (with
   * one shard per container per slot, the bench's 8 containers wrote 2.0-2.95 % of all the mix's
   * writes on one shard): the two-choice read on fresh counts evens the shards out, where a blind
   * random switch every 10-20 admissions (no read) left the largest shard at 0.8-1.3 % for 1.05-1.10
   * calls per request (its lost races and reads).
   * Measured (visits of 16): lib/keys/rate-limiter.test.ts's 10 containers at 1,000/s on a 60 s
   * window: 1.08 calls per request (2,156 for 2,000 in one run), largest shard 162 of 2,000 writes
   * (with one shard per container per slot the test allowed 410). `npx tsx bench/partitions.ts`
   * (8 containers, the issue's mix, 12,515 writes): largest counter shard 74 writes, 0.59 % of all
   * writes (25 containers: 0.66 %; one shard per container per slot: 2.0-2.95 %); the limit held
   * (1,000 in any 1,000 ms, 1,530 of 1,875 admitted). The same model replayed alone against dynalite
   * (3 runs): 1.06-1.07 calls per counted request with 8 containers, 1.08-1.09 with 25. A sweep of
   * the visit length (3 runs each, reading on every visit): 10 spread a little more (0.52-0.64 %)
   * but cost 1.11 calls per request in the test; 20 cost 1.06 but left up to 1.13 % (25 containers).
   *
   * Headers of a sharded subject: limit = the whole limit, remaining = an estimate (exact for the
   * shard counted in, the other shards as this container last saw them), reset = the counted shard's.
   */
  async hit(subject: string, limit: number, windowSeconds: number, now: Date): Promise<RateLimitState> {
    const shards = shardsFor(limit, windowSeconds);
    if (shards === 1) return this.hitItem(subject, limit, windowSeconds, now);
    const share = (shard: number) => Math.floor(limit / shards) + (shard < limit % shards ? 1 : 0);
    const shardSubject = (shard: number) => `${subject}#${shard}`;
    const all = Array.from({ length: shards }, (_v, i) => i);
    const readEvery = !all.some((i) => this.lastSeen.has(shardSubject(i)));
    if (readEvery) await this.readAll(all.map(shardSubject));
    const slot = Math.floor(now.getTime() / Math.max(1, Math.ceil((windowSeconds * 1000) / SLOTS_PER_WINDOW)));
    const current = this.shardInUse.get(subject);
    const stay = current !== undefined && current.slot === slot && current.shard < shards && current.admissions < this.admissionsPerVisit;
    // another container wrote this subject's shards in this slot or the one before: remembered copies are behind
    const shared = current?.sharedSlot !== undefined && current.sharedSlot >= slot - 1;
    let first: number;
    if (stay) first = current.shard;
    else {
      // two distinct shards at random, the less written of the two: read fresh (one consistent BatchGetItem, no
      // write) when other containers write them too; alone, the copies this container remembers are exact
      const a = Math.floor(this.random() * shards) % shards;
      const b = (a + 1 + (Math.floor(this.random() * (shards - 1)) % (shards - 1))) % shards;
      if (!readEvery && shared) await this.readAll([shardSubject(a), shardSubject(b)]);
      const [loadA, loadB] = [a, b].map((i) => this.loadSeen(shardSubject(i), share(i), windowSeconds, now));
      // on a tie, not the shard the visit is leaving
      first = loadB! < loadA! || (loadB === loadA && a === current?.shard) ? b : a;
    }
    let before = this.lastSeen.get(shardSubject(first));
    let state = await this.hitItem(shardSubject(first), share(first), windowSeconds, now);
    let counted = first;
    if (state.exceeded) {
      const open = all.filter((i) => i !== first && this.remainingSeen(shardSubject(i), share(i), windowSeconds, now) !== 0);
      if (open.length) {
        counted = open[Math.floor(this.random() * open.length) % open.length]!;
        before = this.lastSeen.get(shardSubject(counted));
        state = await this.hitItem(shardSubject(counted), share(counted), windowSeconds, now);
      }
    }
    if (state.exceeded) return { ...state, limit, remaining: 0 };
    // the write found other writers when its slot's count is not the copy it started from plus this admission
    const after = this.lastSeen.get(shardSubject(counted));
    const written = after?.latest;
    const othersWrote = !before || written === undefined || (after!.slots.get(written) ?? 0) !== (before.slots.get(written) ?? 0) + 1;
    const admissions = stay && counted === current.shard ? current.admissions + 1 : 1;
    this.shardInUse.delete(subject);
    this.shardInUse.set(subject, { slot, shard: counted, admissions, sharedSlot: othersWrote ? slot : current?.sharedSlot });
    if (this.shardInUse.size > MAX_REMEMBERED_SUBJECTS) this.shardInUse.delete(this.shardInUse.keys().next().value!);
    let remaining = state.remaining;
    for (const i of all) if (i !== counted) remaining += this.remainingSeen(shardSubject(i), share(i), windowSeconds, now) ?? share(i);
    return { ...state, limit, remaining: Math.min(limit, remaining) };
  }

  /** Reads the items of `subjects` (at most 100) in one consistent BatchGetItem and remembers them. */
  private async readAll(subjects: string[]): Promise<void> {
    const out = await this.db.send(
      new BatchGetItemCommand({ RequestItems: { [this.table]: { Keys: subjects.map((s) => ({ pk: { S: `${s}#sw` } })), ConsistentRead: true } } }),
    );
    const found = new Map((out.Responses?.[this.table] ?? []).map((item) => [item.pk?.S, item]));
    const unprocessed = new Set((out.UnprocessedKeys?.[this.table]?.Keys ?? []).map((k) => k.pk?.S));
    // an unprocessed key is simply not remembered: its first use reads it
    for (const s of subjects) if (!unprocessed.has(`${s}#sw`)) this.remember(s, snapshotOf(found.get(`${s}#sw`)));
  }

  /**
   * How loaded a shard looked when this container last saw it, for picking the lighter of two:
   * full (or never seen) first as the heaviest, then by the admissions of the slot a write would go
   * to now (its write rate), then by the admissions of its window.
   */
  private loadSeen(subject: string, limit: number, windowSeconds: number, now: Date): number {
    const seen = this.lastSeen.get(subject);
    if (!seen) return Number.MAX_SAFE_INTEGER;
    const slotMs = Math.max(1, Math.ceil((windowSeconds * 1000) / SLOTS_PER_WINDOW));
    const slot = Math.max(seen.latest ?? 0, Math.floor(now.getTime() / slotMs));
    const inWindow = countIn(seen.slots, slot - SLOTS_PER_WINDOW, slot);
    if (inWindow >= limit) return Number.MAX_SAFE_INTEGER;
    return (seen.slots.get(slot) ?? 0) * (limit + 1) + inWindow;
  }

  /** What this container last saw of a shard: its remaining capacity now (undefined: never seen). */
  private remainingSeen(subject: string, limit: number, windowSeconds: number, now: Date): number | undefined {
    const seen = this.lastSeen.get(subject);
    if (!seen) return undefined;
    const slotMs = Math.max(1, Math.ceil((windowSeconds * 1000) / SLOTS_PER_WINDOW));
    const slot = Math.max(seen.latest ?? 0, Math.floor(now.getTime() / slotMs));
    return Math.max(0, limit - countIn(seen.slots, slot - SLOTS_PER_WINDOW, slot));
  }

  private async hitItem(subject: string, limit: number, windowSeconds: number, now: Date): Promise<RateLimitState> {
    const windowMs = windowSeconds * 1000;
    const slotMs = Math.max(1, Math.ceil(windowMs / SLOTS_PER_WINDOW));
    const key = { pk: { S: `${subject}#sw` } };
    const ownSlot = Math.floor(now.getTime() / slotMs);
    // the oldest slot counted now leaves the window when slot k + SLOTS + 1 begins
    const state = (slots: Map<number, number>, first: number, last: number, exceeded: boolean): RateLimitState => {
      const used = countIn(slots, first, last);
      let oldest = last;
      for (const [k, n] of slots) if (n > 0 && k >= first && k < oldest) oldest = k;
      return {
        limit,
        remaining: exceeded ? 0 : Math.max(0, limit - used),
        reset: Math.ceil(((oldest + SLOTS_PER_WINDOW + 1) * slotMs) / 1000),
        exceeded,
      };
    };

    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      // the item as this container last saw it (its last write's ALL_NEW or read), else a consistent read
      const remembered = attempt === 0 ? this.lastSeen.get(subject) : undefined;
      let snapshot: Snapshot;
      if (remembered) snapshot = remembered;
      else {
        const read = await this.db.send(new GetItemCommand({ TableName: this.table, Key: key, ConsistentRead: true }));
        snapshot = snapshotOf(read.Item);
        this.remember(subject, snapshot);
      }
      const { latest, slots } = snapshot;
      const slot = latest !== undefined && latest > ownSlot ? latest : ownSlot;
      const first = slot - SLOTS_PER_WINDOW;
      const older = countIn(slots, first, slot - 1);
      const current = slots.get(slot) ?? 0;
      if (older + current >= limit) {
        // a remembered item may be behind (another container's newer slot frees older ones): refuse on a fresh read only
        if (remembered) continue;
        return state(slots, first, slot, true);
      }

      const names: Record<string, string> = { '#cur': `${SLOT_PREFIX}${slot}`, '#latest': 'latest', '#exp': 'expiresAt' };
      const values: Record<string, AttributeValue> = {
        ':one': { N: '1' },
        ':slot': { N: String(slot) },
        ':exp': { N: String(Math.ceil(((slot + 2 * SLOTS_PER_WINDOW) * slotMs) / 1000) + 60) },
      };
      const conditions: string[] = [];
      if (latest === undefined) {
        conditions.push('attribute_not_exists(#latest)');
      } else if (latest === slot) {
        // only s<slot> can change: the older slots are closed
        conditions.push('#latest = :slot', '(attribute_not_exists(#cur) OR #cur < :allow)');
        values[':allow'] = { N: String(limit - older) };
      } else {
        // latest < slot: nothing newer than `latest` exists and the slots before it are closed; only
        // s<latest> may still grow (requests of that slot): bound it, as the same-slot case bounds s<slot>
        values[':prevSlot'] = { N: String(latest) };
        conditions.push('#latest = :prevSlot');
        if (latest >= first) {
          names['#prev'] = `${SLOT_PREFIX}${latest}`;
          conditions.push('(attribute_not_exists(#prev) OR #prev < :allowPrev)');
          values[':allowPrev'] = { N: String(limit - (older - (slots.get(latest) ?? 0))) };
        }
      }
      const stale = [...slots.keys()].filter((k) => k < first);
      stale.forEach((k, i) => (names[`#old${i}`] = `${SLOT_PREFIX}${k}`));
      const remove = stale.length ? ` REMOVE ${stale.map((_k, i) => `#old${i}`).join(', ')}` : '';
      try {
        const out = await this.db.send(
          new UpdateItemCommand({
            TableName: this.table,
            Key: key,
            UpdateExpression: `ADD #cur :one SET #latest = :slot, #exp = :exp${remove}`,
            ConditionExpression: conditions.join(' AND '),
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
            ReturnValues: 'ALL_NEW',
          }),
        );
        const written = snapshotOf(out.Attributes);
        this.remember(subject, written);
        return state(written.slots, first, slot, false);
      } catch (error) {
        // a lost race: what this instance remembers is behind. Any other error leaves it as it is
        // (a write that may or may not have happened is caught by the next condition)
        if ((error as Error)?.name !== 'ConditionalCheckFailedException') throw error;
        this.lastSeen.delete(subject);
      }
    }
    // lost every race: refuse rather than risk an uncounted admission
    return { limit, remaining: 0, reset: Math.ceil(now.getTime() / 1000) + 1, exceeded: true };
  }
}
