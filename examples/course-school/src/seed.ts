/**
 * The data a database starts with. Always: the school's two one-of-a-kind records (its settings and
 * appearance), which the API reads and updates but never creates. With demo data on (`DEMO`, see
 * `config.ts`): two accounts with published passwords and a small school with every kind of record,
 * created on the first start (and never again, so what a visitor deletes stays deleted). Records
 * are built through their families, so the seed is validated by the same schemas as API requests.
 * @module
 */
import { hashPassword } from './accounts/passwords.js';
import { appearance } from './api/families/appearance.js';
import { comments } from './api/families/comments.js';
import { coupons } from './api/families/coupons.js';
import { courses } from './api/families/courses.js';
import { lessons, sections } from './api/families/curriculum.js';
import { digitalProducts } from './api/families/digital-products.js';
import { events } from './api/families/events.js';
import { forms } from './api/families/forms.js';
import { lecturers } from './api/families/lecturers.js';
import { members } from './api/families/members.js';
import { membershipPlans } from './api/families/membership-plans.js';
import { orders } from './api/families/orders.js';
import { pages } from './api/families/pages.js';
import { posts } from './api/families/posts.js';
import { school } from './api/families/school.js';
import { students } from './api/families/students.js';
import { subscriptions } from './api/families/subscriptions.js';
import type { DataStore, NewRecord, Role } from './data/store.js';

/** A demo account: its password is published (README, login page), so it exists only in demo mode. */
export interface DemoAccount {
  readonly id: string;
  readonly email: string;
  readonly password: string;
  readonly name: string;
  readonly role: Role;
}

/** The demo accounts, listed in the README and, in demo mode, on the login page. */
export const DEMO_ACCOUNTS: readonly DemoAccount[] = [
  { id: 'usr_ada', email: 'ada@example.com', password: 'ada-lovelace', name: 'Ada Lovelace', role: 'owner' },
  {
    id: 'usr_grace',
    email: 'grace@example.com',
    password: 'grace-hopper',
    name: 'Grace Hopper',
    role: 'student',
  },
];

const USD = 'USD';

/** The school's settings and appearance: every database has them (the API only reads and updates them). */
function schoolRecords(): NewRecord[] {
  return [
    school.record({
      name: 'Lovelace School of Computing',
      tagline: 'Programming, from the Analytical Engine to compilers',
      description: 'A small online school: self-paced courses, live sessions and a friendly community.',
      contact_email: 'hello@example.com',
      currency: USD,
      timezone: 'Europe/London',
    }),
    appearance.record({ primary_color: '#1d4ed8', accent_color: '#f59e0b', font: 'serif' }),
  ];
}

/** The demo school: lecturers, courses with their curriculum, students, orders and the rest. */
function demoRecords(): NewRecord[] {
  const r: NewRecord[] = [
    lecturers.record('lec_babbage', { name: 'Charles Babbage', bio: 'Designer of the Difference Engine.' }),
    lecturers.record('lec_lovelace', { name: 'Ada Lovelace', bio: 'Wrote the first published program.' }),
    courses.record('crs_analytical_engines', {
      title: 'Introduction to Analytical Engines',
      slug: 'introduction-to-analytical-engines',
      summary: 'How a general-purpose computing machine works, from the mill to the store.',
      description: 'Punched cards, the mill and the store, and your first table of Bernoulli numbers.',
      level: 'beginner',
      price_cents: 4900,
      currency: USD,
      status: 'published',
      lecturer_ids: ['lec_lovelace', 'lec_babbage'],
    }),
    courses.record('crs_compilers', {
      title: 'Compilers from Scratch',
      slug: 'compilers-from-scratch',
      summary: 'Build a compiler for a small language: lexer, parser, code generation.',
      level: 'intermediate',
      price_cents: 9900,
      currency: USD,
      status: 'published',
      lecturer_ids: ['lec_lovelace'],
    }),
    courses.record('crs_debugging', {
      title: 'Debugging in Practice',
      slug: 'debugging-in-practice',
      summary: 'Find the moth: a method for finding and fixing bugs.',
      level: 'beginner',
      price_cents: 0,
      currency: USD,
      status: 'published',
    }),
    courses.record('crs_bernoulli_advanced', {
      title: 'Advanced Bernoulli Numbers',
      slug: 'advanced-bernoulli-numbers',
      summary: 'A draft course, not yet in the catalog.',
      level: 'advanced',
      price_cents: 14900,
      currency: USD,
      status: 'draft',
    }),
  ];

  const outline: Record<string, [string, [string, number, boolean][]][]> = {
    crs_analytical_engines: [
      [
        'The machine',
        [
          ['The mill and the store', 12, true],
          ['Punched cards', 18, false],
        ],
      ],
      [
        'Programs',
        [
          ['Loops on cards', 20, false],
          ['Bernoulli numbers, step by step', 35, false],
        ],
      ],
    ],
    crs_compilers: [
      [
        'Front end',
        [
          ['Lexing', 25, true],
          ['Parsing expressions', 40, false],
        ],
      ],
      [
        'Back end',
        [
          ['A stack machine', 30, false],
          ['Generating code', 45, false],
        ],
      ],
    ],
    crs_debugging: [
      [
        'Method',
        [
          ['Reproduce first', 10, true],
          ['Bisect', 15, false],
        ],
      ],
    ],
    crs_bernoulli_advanced: [['Draft', [['Work in progress', 5, false]]]],
  };
  for (const [courseId, secs] of Object.entries(outline)) {
    secs.forEach(([sectionTitle, lessonList], s) => {
      const sectionId = `sec_${courseId.slice(4)}_${s + 1}`;
      r.push(sections.record(sectionId, { title: sectionTitle, position: s }, { parentId: courseId }));
      lessonList.forEach(([lessonTitle, minutes, preview], l) => {
        r.push(
          lessons.record(
            `les_${courseId.slice(4)}_${s + 1}_${l + 1}`,
            {
              title: lessonTitle,
              section_id: sectionId,
              position: l,
              duration_minutes: minutes,
              preview,
              content: `# ${lessonTitle}\n\nLesson notes for members of the course.`,
            },
            { parentId: courseId },
          ),
        );
      });
    });
  }

  r.push(
    students.record('stu_grace', {
      name: 'Grace Hopper',
      email: 'grace@example.com',
      enrolled_course_ids: ['crs_analytical_engines', 'crs_debugging'],
    }),
    students.record('stu_alan', {
      name: 'Alan Turing',
      email: 'alan@example.com',
      enrolled_course_ids: ['crs_compilers'],
    }),
    students.record('stu_katherine', {
      name: 'Katherine Johnson',
      email: 'katherine@example.com',
      enrolled_course_ids: ['crs_analytical_engines'],
    }),
    members.record('mem_ada', { name: 'Ada Lovelace', email: 'ada@example.com', role: 'admin' }),
    members.record('mem_mary', { name: 'Mary Somerville', email: 'mary@example.com', role: 'editor' }),
    membershipPlans.record('pln_free', {
      name: 'Free',
      description: 'Free courses and the community.',
      price_cents: 0,
      currency: USD,
      interval: 'month',
      features: ['Free courses', 'Community posts'],
    }),
    membershipPlans.record('pln_monthly', {
      name: 'Pro monthly',
      description: 'Every course, every live session.',
      price_cents: 1900,
      currency: USD,
      interval: 'month',
      features: ['All courses', 'Live events', 'Downloadable notes'],
    }),
    membershipPlans.record('pln_yearly', {
      name: 'Pro yearly',
      description: 'Pro, two months free.',
      price_cents: 19000,
      currency: USD,
      interval: 'year',
      features: ['All courses', 'Live events', 'Downloadable notes'],
    }),
    membershipPlans.record('pln_team', {
      name: 'Team',
      description: 'For companies, by invitation.',
      price_cents: 99000,
      currency: USD,
      interval: 'year',
      visibility: 'private',
    }),
    coupons.record('cpn_welcome', { code: 'WELCOME10', percent_off: 10 }),
    coupons.record('cpn_spring', {
      code: 'SPRING25',
      percent_off: 25,
      valid_until: '2030-06-01T00:00:00Z',
      max_redemptions: 100,
    }),
    posts.record('pst_welcome', {
      title: 'Welcome to the school',
      body: 'We are open. Start with the free debugging course.',
      status: 'published',
      published_at: '2025-01-06T09:00:00Z',
      tags: ['news'],
    }),
    posts.record('pst_engines', {
      title: 'Why the Analytical Engine still matters',
      body: 'Separating the store from the mill is the idea behind every computer since.',
      status: 'published',
      published_at: '2025-02-03T09:00:00Z',
      tags: ['history'],
    }),
    posts.record('pst_draft', { title: 'Upcoming: compilers live', status: 'draft' }),
    comments.record(
      'cmt_1',
      { author_name: 'Grace Hopper', body: 'Looking forward to it!', status: 'approved' },
      { parentId: 'pst_welcome' },
    ),
    comments.record(
      'cmt_2',
      { author_name: 'Anonymous', body: 'Buy cheap watches', status: 'pending' },
      { parentId: 'pst_welcome' },
    ),
    comments.record(
      'cmt_3',
      { author_name: 'Alan Turing', body: 'The store/mill split is underrated.', status: 'approved' },
      { parentId: 'pst_engines' },
    ),
    events.record('evt_office_hours', {
      title: 'Office hours: compilers',
      description: 'Bring your parser questions.',
      starts_at: '2030-03-01T17:00:00Z',
      ends_at: '2030-03-01T18:00:00Z',
      url: 'https://meet.example.com/office-hours',
      capacity: 50,
      status: 'published',
    }),
    events.record('evt_planning', {
      title: 'Team planning (draft)',
      starts_at: '2030-04-01T09:00:00Z',
      ends_at: '2030-04-01T10:00:00Z',
    }),
    digitalProducts.record('dgp_cheatsheet', {
      title: 'Punched-card cheat sheet',
      description: 'Every card operation on one page.',
      price_cents: 500,
      currency: USD,
      file_name: 'punched-cards.pdf',
      status: 'published',
    }),
    digitalProducts.record('dgp_notes', {
      title: 'Compiler course notes',
      price_cents: 1500,
      currency: USD,
      file_name: 'compiler-notes.pdf',
    }),
    forms.record('frm_contact', {
      title: 'Contact us',
      fields: [
        { name: 'email', label: 'Email', type: 'email', required: true },
        { name: 'message', label: 'Message', type: 'textarea', required: true },
      ],
      submission_count: 12,
    }),
    forms.record('frm_feedback', {
      title: 'Course feedback',
      fields: [{ name: 'comments', label: 'Comments', type: 'textarea', required: false }],
      submission_count: 4,
    }),
    pages.record('pag_about', {
      slug: 'about',
      title: 'About the school',
      body: 'Founded by Ada Lovelace to teach programming from first principles.',
      visibility: 'public',
    }),
    pages.record('pag_terms', {
      slug: 'terms',
      title: 'Terms of service',
      body: 'Be kind. Learn.',
      visibility: 'public',
    }),
    pages.record('pag_handbook', {
      slug: 'handbook',
      title: 'Staff handbook',
      body: 'Internal: how we run the school.',
      visibility: 'private',
    }),
    orders.record(
      'ord_grace_1',
      {
        items: [
          {
            kind: 'course',
            id: 'crs_analytical_engines',
            title: 'Introduction to Analytical Engines',
            price_cents: 4900,
          },
        ],
        total_cents: 4410,
        currency: USD,
        coupon_code: 'WELCOME10',
        status: 'paid',
      },
      { ownerId: 'usr_grace' },
    ),
    orders.record(
      'ord_alan_1',
      {
        items: [{ kind: 'course', id: 'crs_compilers', title: 'Compilers from Scratch', price_cents: 9900 }],
        total_cents: 9900,
        currency: USD,
        status: 'paid',
      },
      { ownerId: 'usr_alan' },
    ),
    subscriptions.record(
      'sub_grace',
      { plan_id: 'pln_monthly', renews_at: '2030-01-01T00:00:00Z' },
      { ownerId: 'usr_grace' },
    ),
  );
  return r;
}

/**
 * Seeds a database: the school's records when missing; with `demo`, the demo accounts and school
 * on the first start in demo mode (the `seeded_at` marker). Safe when several instances start on one
 * empty database at once.
 */
export async function seed(data: DataStore, now: number, options: { readonly demo: boolean }): Promise<void> {
  // `insertRecord` leaves an existing record as it is: the owner's changes stay.
  for (const record of schoolRecords()) await data.insertRecord(record, now);
  if (!options.demo || (await data.getMeta('seeded_at')) !== null) return;
  // One password at a time: each scrypt holds 32 MiB while it runs, and the process's peak memory
  // is what a container limit must allow. The start does not wait longer for it: the hashing runs on
  // libuv's pool beside the library's own start (app.ts), which takes longer than both hashes.
  const hashes: string[] = [];
  for (const account of DEMO_ACCOUNTS) hashes.push(await hashPassword(account.password));
  for (const [index, account] of DEMO_ACCOUNTS.entries()) {
    if ((await data.getUserByEmail(account.email)) !== null) continue;
    const user = {
      id: account.id,
      email: account.email,
      name: account.name,
      role: account.role,
      passwordHash: hashes[index]!,
      createdAt: now,
    };
    try {
      await data.createUser(user);
    } catch (error) {
      // Another instance starting on the same database created it while we hashed the password.
      if ((await data.getUserByEmail(account.email)) === null) throw error;
    }
  }
  for (const record of demoRecords()) await data.insertRecord(record, now);
  await data.putMetaIfAbsent('seeded_at', new Date(now).toISOString());
}

/**
 * The store as a server without demo data sees it: the demo accounts, should a database seeded in
 * demo mode be reused, do not exist (their passwords are published). Signing in as them, their
 * sessions and their tokens' API calls all fail as for a deleted account.
 */
export function withoutDemoAccounts(data: DataStore): DataStore {
  const ids = new Set(DEMO_ACCOUNTS.map((a) => a.id));
  const emails = new Set(DEMO_ACCOUNTS.map((a) => a.email));
  return {
    ...data,
    async getUser(id) {
      return ids.has(id) ? null : data.getUser(id);
    },
    async getUserByEmail(email) {
      return emails.has(email.toLowerCase()) ? null : data.getUserByEmail(email);
    },
    async renameUser(id, name) {
      return ids.has(id) ? null : data.renameUser(id, name);
    },
  };
}
