import { Journal } from "@openworker/journal";

// A reader can run beside the writing host: read-only, committed records only, never migrates.
const journal = Journal.open({ path: ".openworker/journal.db", readonly: true });
try {
  const report = journal.verify();
  if (report.ok) {
    console.log(`intact: ${report.sessions} sessions, ${report.records} records`);
  } else {
    const broken = report.firstBreak;
    console.error(`broken: session ${broken?.sessionId}, record ${broken?.seq}: ${broken?.problem}`);
    process.exitCode = 1;
  }
} finally {
  journal.close();
}
