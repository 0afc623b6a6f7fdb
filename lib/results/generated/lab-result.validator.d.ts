import type { CompiledValidator } from '../../schemas/compiled-validator';
declare const validate: CompiledValidator;
export = validate;
