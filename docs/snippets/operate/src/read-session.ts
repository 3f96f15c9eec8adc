import { Journal } from "@openworker/journal";

const sessionId = process.argv[2];
if (!sessionId) throw new Error("usage: node dist/read-session.js <session-id>");

const journal = Journal.open({ path: ".openworker/journal.db", readonly: true });
try {
  const session = journal.session(sessionId);
  if (!session) throw new Error(`no session ${sessionId} in this journal`);
  console.log(`${session.sessionId} opened ${session.openedAt}, identity ${session.executionIdentity}`);
  for (const call of journal.calls(sessionId)) {
    const decision = call.decision ? `${call.decision} by ${call.decidedBy}` : "no decision";
    console.log(`  ${call.callId} ${call.qualifiedName}: ${decision}, ${call.outcome ?? "open"}${call.code ? ` (${call.code})` : ""}`);
    for (const record of journal.timeline({ sessionId, callId: call.callId })) console.log(`    ${record.seq} ${record.at} ${record.kind}`);
  }
} finally {
  journal.close();
}
