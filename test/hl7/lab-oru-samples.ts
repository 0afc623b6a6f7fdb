/**
 * The public ORU^R01 samples (test/hl7/samples, origins and licences in its README) the lab round trip
 * and the lab sample sweep post through HL7 intake: every sample with OBX observations of a lab.
 */
import { join } from 'node:path';

export const SAMPLES = join(__dirname, 'samples');
export const SAMPLE_FILES = [
  'cdcgov-trusted-intermediary/CA__003_CA_ORU_R01_CDPH_produced_3_hl7_translation_final.hl7',
  'cdcgov-trusted-intermediary/CA__004_CA_ORU_R01_CDPH_produced_0_initial_message.hl7',
  'cdcgov-trusted-intermediary/CA__006_CA_ORU_R01_UCSD2024-07-11-16-02-17-749_0_initial_message.hl7',
  'cdcgov-trusted-intermediary/CA__020_CA_ORU_R01_CDPH_OBX_to_LOINC_0_initial_message.hl7',
  'cdcgov-trusted-intermediary/Epic__002_Epic_ORU_R01.hl7',
  'cdcgov-trusted-intermediary/LA__003_LA_ORU_R01_NBS_obr_flatten_0_initial_message.hl7',
  'cdcgov-trusted-intermediary/LA__004_LA_ORU_R01_NBS_obr_flatten_2_0_initial_message.hl7',
  'cdcgov-trusted-intermediary/MN__004_MN_ORU_R01_NBS_0_initial_message.hl7',
  'cdcgov-trusted-intermediary/Natus__002_Natus_ORU_R01_NBS.hl7',
  'cdcgov-trusted-intermediary/Natus__003_Natus_ORU_R01_NBS.hl7',
  'cdcgov-trusted-intermediary/Natus__004_Natus_ORU_R01_NBS.hl7',
  'cdcgov-trusted-intermediary/NewSTEPs__002_NewSTEPs_ORU_R01.hl7',
  'cdcgov-trusted-intermediary/Oracle__004_Oracle_ORU_R01.hl7',
  'cdcgov-trusted-intermediary/TN__001_TN_ORU_R01_LRI.hl7',
  'cdcgov-trusted-intermediary/TX__002_TX_ORU_R01.hl7',
  'cdcgov-trusted-intermediary/Test__Results__002_AL_ORU_R01_NBS_Fully_Populated_0_initial_message.hl7',
  'python-hl7/oru-r01-ghh-lab-2.4.hl7',
];
