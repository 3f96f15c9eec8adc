import { Journal } from "@openworker/journal";

// Opening as the writer recovers: every call a crash left open gets the terminal outcome
// "interrupted". Nothing is replayed; `started` says whether effects may have happened.
const journal = Journal.open({ path: ".openworker/journal.db" });
try {
  for (const call of journal.recovered) {
    const effects = call.started ? "it had started: check its effects by hand" : "it never started";
    console.log(`interrupted: ${call.qualifiedName} (${call.callId}, session ${call.sessionId}); ${effects}`);
  }
} finally {
  journal.close();
}
