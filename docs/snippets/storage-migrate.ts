// #region migrate
import { migrate } from 'portcullis/postgres';

const report = await migrate({ connectionString: process.env.DATABASE_URL ?? '' });
console.log(report); // { schema: 'portcullis', fromVersion: 0, toVersion: 7, applied: [1, 2, 3, 4, 5, 6, 7] }
// #endregion migrate
