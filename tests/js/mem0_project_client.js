// mem0's JavaScript MemoryClient (npm mem0ai) against a live memlane server: the project's settings, webhooks,
// feedback and exports (docs/webhooks.md). Run by tests/server/test_mem0_js_project.py with MEMLANE_URL,
// MEMLANE_TENANT, MEMLANE_ADMIN_KEY (an admin key of the tenant) and HOOK_URL (a receiver); prints
// {"checked": [method names]} on success, exits 1 with the failed check otherwise.
"use strict";

const assert = require("node:assert/strict");
const { MemoryClient } = require("mem0ai");

const checked = [];

async function check(name, body) {
  await body();
  checked.push(name);
}

async function main() {
  const client = new MemoryClient({ apiKey: process.env.MEMLANE_ADMIN_KEY, host: process.env.MEMLANE_URL });
  await client.ping();
  let hook, memoryId, exportId;

  await check("updateProject", async () => {
    const answer = await client.updateProject({ customInstructions: "Only food", customCategories: [{ food: "meals" }] });
    assert.equal(answer.customInstructions, "Only food");
  });

  await check("getProject", async () => {
    const project = await client.getProject({ fields: ["customInstructions", "customCategories"] });
    assert.equal(project.customInstructions, "Only food");
    assert.deepEqual(project.customCategories, [{ food: "meals" }]);
    assert.equal(project.multilingual, undefined);
  });

  await check("createWebhook", async () => {
    hook = await client.createWebhook({ name: "js hook", url: process.env.HOOK_URL, eventTypes: ["memory_add"] });
    assert.match(hook.webhookId, /^wh_/);
    assert.deepEqual(hook.eventTypes, ["memory_add"]);
    assert.match(hook.secret, /^whsec_/);
  });

  await check("getWebhooks", async () => {
    const hooks = await client.getWebhooks();
    assert.deepEqual(hooks.map((h) => [h.webhookId, h.name, h.isActive]), [[hook.webhookId, "js hook", true]]);
  });

  await check("updateWebhook", async () => {
    const answer = await client.updateWebhook({ webhookId: hook.webhookId, name: "renamed",
                                                eventTypes: ["memory_add", "memory_delete"] });
    assert.equal(answer.message, "Webhook updated successfully");
    assert.deepEqual((await client.getWebhooks()).map((h) => h.name), ["renamed"]);
  });

  await check("feedback", async () => {
    memoryId = (await client.add("I love ramen", { userId: "js-ana", infer: false })).results[0].id;
    const answer = await client.feedback({ memoryId, feedback: "POSITIVE", feedbackReason: "right" });
    assert.equal(answer.message, "Feedback recorded");
    assert.equal(answer.feedback, "POSITIVE");
  });

  await check("createMemoryExport", async () => {
    const schema = { type: "object", properties: { memories: { type: "array", items: {
      type: "object", properties: { id: { type: "string" }, memory: { type: "string" } } } } } };
    const made = await client.createMemoryExport({ schema, filters: { user_id: "js-ana" } });
    assert.equal(made.status, "SUCCEEDED");
    exportId = made.id;
  });

  await check("getMemoryExport", async () => {
    const data = await client.getMemoryExport({ memoryExportId: exportId });
    assert.deepEqual(data, { memories: [{ id: memoryId, memory: "I love ramen" }] });
    assert.deepEqual(await client.getMemoryExport({ filters: { user_id: "js-ana" } }), data);
  });

  await check("deleteWebhook", async () => {
    assert.deepEqual(await client.deleteWebhook({ webhookId: hook.webhookId }),
                     { message: "Webhook deleted successfully" });
    assert.deepEqual(await client.getWebhooks(), []);
  });

  process.stdout.write(JSON.stringify({ checked }) + "\n");
}

main().catch((error) => {
  process.stderr.write(`mem0 JavaScript client check failed after ${JSON.stringify(checked)}:\n${error.stack}\n`);
  process.exit(1);
});
