import type { House } from './house.js';

/**
 * The sample house: a house inside the shipped model's area that draws no warning. It is the house
 * of the OpenAPI examples (openapi-example.ts), of the tests, the benches and the generated-client
 * program, so that adding a field to House means adding it here and nowhere else among the samples.
 */
export const SAMPLE_HOUSE: House = {
  bedrooms: 3,
  bathrooms: 2.25,
  floors: 2,
  sqft_living: 2170,
  sqft_basement: 400,
  sqft_lot: 7242,
  waterfront: false,
  view: 0,
  condition: 3,
  grade: 7,
  yr_built: 1951,
  yr_renovated: 1991,
  lat: 47.721,
  long: -122.319,
  sqft_living15: 1690,
  sqft_lot15: 7639,
};

/** A second, larger house of the batch examples: two houses show that answers keep the houses' order. */
export const LARGER_SAMPLE_HOUSE: House = {
  ...SAMPLE_HOUSE,
  bedrooms: 4,
  bathrooms: 2.5,
  sqft_living: 2900,
  sqft_basement: 0,
  sqft_lot: 9600,
  grade: 9,
  yr_built: 1998,
  yr_renovated: 0,
  lat: 47.6062,
  long: -122.1417,
  sqft_living15: 2750,
  sqft_lot15: 9100,
};
