// quiet request logs in test output unless a test asks for them
process.env.LOG_LEVEL = process.env.LOG_LEVEL || 'warn';
// this machine runs Node 20; the deployed runtime is Node 24 (the SDK's notice is about that)
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
