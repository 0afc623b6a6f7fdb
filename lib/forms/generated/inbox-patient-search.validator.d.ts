import type { CompiledValidator } from '../../http/validation';
declare const validate: CompiledValidator;
export = validate;
