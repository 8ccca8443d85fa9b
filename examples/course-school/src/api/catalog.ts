/**
 * The public catalog, read the same way by the REST routes, `/mcp`, `/pricing.md` and the home
 * page: published courses with their outline, public membership plans, public pages.
 * @module
 */
import type { DataStore, RecordKind, RecordQuery, StoredRecord } from '../data/store.js';

/** Every record of a kind matching a query, following cursors (bounded: 10 000 records). */
export async function allRecords(
  data: DataStore,
  kind: RecordKind,
  query: Omit<RecordQuery, 'limit' | 'after'> = {},
): Promise<StoredRecord[]> {
  const out: StoredRecord[] = [];
  let after: string | undefined;
  do {
    const page = await data.listRecords(kind, {
      ...query,
      limit: 100,
      ...(after === undefined ? {} : { after }),
    });
    out.push(...page.items);
    after = page.next ?? undefined;
  } while (after !== undefined && out.length < 10_000);
  return out;
}

/** One lesson in an outline: what a visitor may know before buying. */
export interface OutlineLesson {
  readonly id: string;
  readonly title: string;
  readonly duration_minutes: number;
  readonly preview: boolean;
}

/** A course's curriculum outline: sections in order, each with its lessons in order. */
export interface Outline {
  readonly sections: readonly {
    readonly id: string | null;
    readonly title: string;
    readonly lessons: readonly OutlineLesson[];
  }[];
  readonly lesson_count: number;
  readonly duration_minutes: number;
}

const byPosition = (a: StoredRecord, b: StoredRecord) =>
  Number(a.data.position ?? 0) - Number(b.data.position ?? 0);

/** The outline of a course (titles and durations only, never lesson content). */
export async function courseOutline(data: DataStore, courseId: string): Promise<Outline> {
  const sections = (await allRecords(data, 'section', { parentId: courseId })).sort(byPosition);
  const lessons = (await allRecords(data, 'lesson', { parentId: courseId })).sort(byPosition);
  const summary = (l: StoredRecord): OutlineLesson => ({
    id: l.id,
    title: String(l.data.title),
    duration_minutes: Number(l.data.duration_minutes ?? 0),
    preview: l.data.preview === true,
  });
  const outline: Outline['sections'][number][] = sections.map((s) => ({
    id: s.id,
    title: String(s.data.title),
    lessons: lessons.filter((l) => l.data.section_id === s.id).map(summary),
  }));
  const loose = lessons.filter((l) => !sections.some((s) => s.id === l.data.section_id));
  if (loose.length > 0) outline.push({ id: null, title: 'Other lessons', lessons: loose.map(summary) });
  return {
    sections: outline,
    lesson_count: lessons.length,
    duration_minutes: lessons.reduce((sum, l) => sum + Number(l.data.duration_minutes ?? 0), 0),
  };
}

/** Published courses whose title or summary contains `query` (all when absent), in catalog order. */
export async function searchPublishedCourses(
  data: DataStore,
  query: string | undefined,
  limit: number,
): Promise<StoredRecord[]> {
  const page = await data.listRecords('course', {
    publicOnly: true,
    limit,
    ...(query === undefined || query === '' ? {} : { search: query }),
  });
  return [...page.items];
}

/** A published course, or null (drafts are not in the catalog). */
export async function publishedCourse(data: DataStore, id: string): Promise<StoredRecord | null> {
  const course = await data.getRecord('course', id);
  return course?.isPublic ? course : null;
}

/** Membership plans shown to everyone. */
export function publicPlans(data: DataStore): Promise<StoredRecord[]> {
  return allRecords(data, 'membership_plan', { publicOnly: true });
}
