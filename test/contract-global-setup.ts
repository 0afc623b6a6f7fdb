import { clearContractCoverage } from './support/contract-report';

export default function globalSetup(): void {
  clearContractCoverage();
}
