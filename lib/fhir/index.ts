export * from './logical-id';
export * from './terminology';
export * from './chart-resources';
export * from './lab-report';
export * from './bundle';
export * from './operation-outcome';
export * from './capability-statement';
export * from './text';
