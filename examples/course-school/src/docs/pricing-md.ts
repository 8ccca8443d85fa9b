/**
 * `/pricing.md`: what the school sells, from the live catalog: public membership plans, published
 * courses and published digital products. Built per request, so a price change shows at once.
 * @module
 */
import { allRecords, publicPlans } from '../api/catalog.js';
import type { DataStore, StoredRecord } from '../data/store.js';

/** `4900, USD` → `$49.00`; zero is `Free`. */
export function formatPrice(cents: number, currency: string): string {
  if (cents === 0) return 'Free';
  return new Intl.NumberFormat('en-US', { style: 'currency', currency }).format(cents / 100);
}

const INTERVAL: Readonly<Record<string, string>> = { month: ' per month', year: ' per year', once: ' once' };

/** Markdown table cells must not break the table. */
const cell = (value: unknown) => String(value).replace(/\|/g, '\\|').replace(/\s+/g, ' ');

const price = (r: StoredRecord) => formatPrice(Number(r.data.price_cents), String(r.data.currency));

/** Builds the Markdown. */
export async function buildPricingMd(data: DataStore, title: string, issuer: string): Promise<string> {
  const [plans, courses, products] = await Promise.all([
    publicPlans(data),
    allRecords(data, 'course', { publicOnly: true }),
    allRecords(data, 'digital_product', { publicOnly: true }),
  ]);
  return [
    `# Pricing: ${title}`,
    '',
    '> Membership plans, courses and digital products on sale, with prices. Generated from the live catalog.',
    '',
    '## Membership plans',
    '',
    '| Plan | Price | What you get |',
    '|---|---|---|',
    ...plans.map(
      (p) =>
        `| ${cell(p.data.name)} | ${price(p)}${Number(p.data.price_cents) === 0 ? '' : (INTERVAL[String(p.data.interval)] ?? '')} | ${cell((p.data.features as string[]).join(', ') || p.data.description)} |`,
    ),
    '',
    '## Courses',
    '',
    '| Course | Level | Price |',
    '|---|---|---|',
    ...courses.map((c) => `| ${cell(c.data.title)} | ${cell(c.data.level)} | ${price(c)} |`),
    '',
    '## Digital products',
    '',
    '| Product | Price |',
    '|---|---|',
    ...products.map((p) => `| ${cell(p.data.title)} | ${price(p)} |`),
    '',
    `Machine-readable: ${issuer}/api/v1/membership-plans and ${issuer}/api/v1/courses (no token needed).`,
    '',
  ].join('\n');
}
