// quiet request logs in test output unless a test asks for them
process.env.LOG_LEVEL = process.env.LOG_LEVEL || 'warn';
// this machine runs Node 20; the deployed runtime is Node 24 (the SDK's notice is about that)
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
// the suites check revocation on the very next request: the authorizer reads key and partner every time (lib/keys/access-wiring.ts)
process.env.ACCESS_RECORD_MAX_AGE_SECONDS = process.env.ACCESS_RECORD_MAX_AGE_SECONDS ?? '0';
