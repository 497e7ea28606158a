/** Realistic support tickets for the benchmarks (a mix of categories, lengths and priorities). */
export const REALISTIC_TICKETS = [
  { subject: 'Charged twice for my March invoice', body: 'Hello, I see two payments of 49.00 on my card for the same invoice. Please refund one of them. Thanks, Maria' },
  { subject: 'Cannot sign in after password reset', body: 'I reset my password yesterday and now I cannot log in. The two-factor code never arrives. I am locked out.' },
  { subject: 'Where is my parcel?', body: 'The tracking page has said "out for delivery" for four days. The courier never came. Order 88213.' },
  { subject: 'Change the company name on our account', body: 'We renamed our business. Please update the company name shown on the account and add a new user for our accountant.' },
  { subject: 'Feature request: dark mode', body: 'It would be great to have a dark theme in the dashboard. Keep up the good work!' },
  { subject: 'Refund status', body: '' },
  { subject: 'Parcel lost in transit', body: 'The courier says it was delivered, but nothing arrived. '.repeat(20) },
  { subject: 'Question about VAT on invoices', body: 'Do your invoices show VAT separately? Our accounting team needs it for the payment run. '.repeat(5) },
];
