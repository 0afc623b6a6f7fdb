// quiet request logs in test output unless a test asks for them
process.env.LOG_LEVEL = process.env.LOG_LEVEL || 'warn';
